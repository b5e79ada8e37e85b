import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { silentLogger, sumDecimals, tempDir } from './helpers.js';

const KEY = 'svc_live_testdepthprice';
const shallow = Array.from({ length: 20 }, (_, i) => `shallow kw ${i}`);
const deep = Array.from({ length: 6 }, (_, i) => `deep kw ${i}`);
const yaml =
  `name: depthprice\nbudget_cny: 0.35\njobs:\n` +
  `  - kind: serp\n    name: shallow\n    depth: 10\n    locations: [2840]\n    keywords: ${JSON.stringify(shallow)}\n` +
  `  - kind: serp\n    name: deep\n    depth: 200\n    locations: [2840]\n    keywords: ${JSON.stringify(deep)}\n`;

/**
 * Issue 44: a further block of 10 results costs 0.75 of the base, the base itself or nothing
 * (the emulator's `extraDepthPrice`). A 0.35 CNY budget over 20 depth-10 tasks (0.0043 each) and
 * 6 depth-200 ones is never passed, and under the reference 0.75 and the free reading the run
 * buys as many tasks as when the client weighed a block at a fixed 0.75 (20 + 4, and 20 + 6).
 */
describe('the budget learns the price of a further depth block from the charges', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    tmp = await tempDir('pipeline-depthprice-');
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  for (const [extraDepthPrice, posted] of [
    [1, 23], // 20 × 0.0043 + 3 × 0.0860 = 0.3440 (a fixed 0.75 bought a fourth: 0.4300)
    [0.75, 24], // 20 × 0.0043 + 4 × 0.0651 = 0.3464, as before
    [0, 26], // a flat 0.0043: all 26 (0.1118)
  ] as const) {
    it(`extraDepthPrice=${extraDepthPrice}: spends no more than the budget and buys ${posted} tasks`, async () => {
      sandbox = await startSandbox({ readyAfterMs: 0, readings: { extraDepthPrice } });
      const run = await runPipeline({
        pipeline: parsePipeline(yaml, 'depthprice.yaml', {}),
        file: 'depthprice.yaml',
        warehouseDir: tmp.dir,
        baseUrl: sandbox.url,
        apiKey: KEY,
        logger: silentLogger,
        pollIntervalMs: 5,
        limits: { windowMs: 200 },
      });
      const charged = Number(sumDecimals(sandbox.log.map((l) => l.chargeCny)));
      expect(charged).toBeLessThanOrEqual(0.35);
      expect(run.tasks.posted).toBe(posted);
      if (posted < 26) expect(run.stopKind).toBe('budget');
    });
  }
});
