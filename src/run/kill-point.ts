import { writeSync } from 'node:fs';

/**
 * The kill matrix's hook (test/integration/run-kill-matrix.test.ts), honoured only when a test
 * sets `PIPELINE_TEST_KILL_AT=<step>:<phase>` (`start`: before the step does anything; `middle`:
 * part of its work done, e.g. tasks posted and not collected, alerts built and not delivered, a
 * publish committed and its files not moved, one lake file uploaded; `clusters:middle` and
 * `embeddings:middle` fall between a paid /v1 answer landed and what it says kept): there, the process says
 * `killed at <step>:<phase>` on stdout and kills itself with SIGKILL, so the test needs no race.
 */
export function killPoint(step: string, phase: 'start' | 'middle'): void {
  if (process.env.PIPELINE_TEST_KILL_AT !== `${step}:${phase}`) return;
  writeSync(1, `killed at ${step}:${phase}\n`);
  process.kill(process.pid, 'SIGKILL');
}
