// The set-up shared by run-budget.test.ts and run-budget-pricing.test.ts (one suite split in two
// so vitest runs the halves in parallel): the 250-task pipeline at a given budget, a fresh
// warehouse per test, and the run options against the test's emulator.
import { afterEach, beforeEach } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { type RunOptions } from '../../src/run/index.js';
import { type SandboxHandle } from '../../src/sandbox/index.js';
import { silentLogger, tempDir } from './helpers.js';

export const KEY = 'svc_live_testbudgettest';
export const keywords = Array.from({ length: 125 }, (_, i) => `kw ${i}`).join(', ');
export const pipeline = (budget: number) =>
  parsePipeline(
    `name: budget\nbudget_cny: ${budget}\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840, 2826]\n    keywords: [${keywords}]\n`,
    'b.yaml',
    {},
  );

/**
 * Registers the per-test set-up (a fresh warehouse folder `tmp`; the emulator the test started as
 * `sandbox` closed after it) in the calling describe block, and returns the test's handles.
 */
export function budgetHarness() {
  const h = {
    sandbox: undefined as unknown as SandboxHandle,
    tmp: undefined as unknown as { dir: string; cleanup: () => Promise<void> },
    opts: (budget: number, extra: Partial<RunOptions> = {}): RunOptions => ({
      pipeline: pipeline(budget),
      file: 'b.yaml',
      warehouseDir: h.tmp.dir,
      baseUrl: h.sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
      limits: { windowMs: 200 }, // a rate-limit "minute" of 0.2 s: 60 calls per 0.2 s
      models: false, // the budget tests read the tasks, the ledger and the emulator: no mart
      ...extra,
    }),
  };
  beforeEach(async () => {
    h.tmp = await tempDir('pipeline-budget-');
  });
  afterEach(async () => {
    await h.sandbox.close();
    await h.tmp.cleanup();
  });
  return h;
}
