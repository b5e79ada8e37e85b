import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

/** The run checkpoints last, after every other step, with the warehouse still open (docs/warehouse.md, "Checkpoints"). */
describe('the run checkpoints as its last step', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };

  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-checkpoint-');
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('runs the checkpoint after the publish and the summary, and the night reads whole afterwards', async () => {
    const yaml = `name: ck\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [running shoes, trail shoes]\n`;
    // The run's warnings: a checkpoint that failed is logged, and the close would checkpoint instead.
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    const outcome = await runPipeline({
      pipeline: parsePipeline(yaml, 'ck.yaml', {}),
      file: 'ck.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_test_ck',
      logger,
      pollIntervalMs: 5,
    });
    expect(outcome.state).toBe('completed');
    expect(Object.keys(outcome.stepsMs!)).toEqual(['ingest', 'models', 'publish', 'summary', 'checkpoint']);
    expect(warnings.filter((w) => w.includes('checkpoint'))).toEqual([]);
    await withWarehouse(tmp.dir, async (wh) => {
      const [r] = await wh.all<{ results: number; items: number }>(
        `SELECT (SELECT count(*) FROM serp_results)::INT AS results, (SELECT count(*) FROM serp_items)::INT AS items`,
      );
      expect(r!.results).toBe(2);
      expect(r!.items).toBeGreaterThan(0);
    });
  });
});
