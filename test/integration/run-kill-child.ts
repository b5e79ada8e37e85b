// Child of run-crash-before-publish.test.ts: one `pipeline run` (the same runPipeline, with the
// options the CLI gives it) that stops for good once STEP is done, before the next step starts:
// it prints "at STEP" and freezes its thread, and the parent kills it with SIGKILL there.
// The stop point is the run's own "step done" log line (run-pipeline.ts), written after the
// step returned, so everything the step committed is in the warehouse and nothing after it ran.
// Usage: node --import tsx run-kill-child.ts <pipeline file> <warehouse dir> <service url> <step>
import pino from 'pino';
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';

const [file, dir, url, step] = process.argv.slice(2) as [string, string, string, string];
const frozen = new Int32Array(new SharedArrayBuffer(4));
const logger = pino(
  { level: 'info' },
  {
    write(line: string) {
      const l = JSON.parse(line) as { msg?: string; step?: string };
      if (l.msg !== 'step done' || l.step !== step) return;
      process.stdout.write(`at ${step}\n`); // a pipe: written before the next line runs
      Atomics.wait(frozen, 0, 0); // no later step starts: the parent kills this process here
    },
  },
);
await runPipeline({
  pipeline: await loadPipeline(file),
  file,
  warehouseDir: dir,
  baseUrl: url,
  apiKey: process.env.SVC_API_KEY!,
  logger,
  pollIntervalMs: 50,
});
process.stdout.write('finished\n');
