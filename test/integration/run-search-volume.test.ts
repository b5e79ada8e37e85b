import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runModels } from '../../src/models/index.js';
import { planPipeline } from '../../src/plan/index.js';
import { runPipeline, type RunSummary } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';

const keywords = Array.from({ length: 750 }, (_, i) => `shoe ${i}`);
const yaml = `name: volumes
jobs:
  - kind: search_volume
    locations: [2840, 2826]
    keywords: [${[...keywords, 'Shoe 1', 'SHOE 2'].map((k) => `"${k}"`).join(', ')}]
`;

describe('a search-volume job: 700 keywords a task, loaded, and trends built from it', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let summary: RunSummary;
  const pipeline = parsePipeline(yaml, 'volumes.yaml', {});

  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-volume-');
    summary = await runPipeline({
      pipeline,
      file: 'volumes.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testvolumes',
      logger: silentLogger,
      pollIntervalMs: 5,
    });
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('packs 750 distinct keywords into two tasks per location, case repeats dropped', () => {
    const plan = planPipeline(pipeline, 'r');
    expect(plan.tasks.map((t) => (t.spec.keywords as string[]).length)).toEqual([700, 50, 700, 50]);
    expect(plan.duplicatesDropped).toBe(4);
    expect(plan.batches).toHaveLength(1);
  });

  it('collects every task and loads one row per keyword and location, with its months', async () => {
    expect(summary.state).toBe('completed');
    expect(summary.tasks).toMatchObject({ planned: 4, posted: 4, collected: 4, failed: 0 });
    expect(sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
    await withWarehouse(tmp.dir, async (wh) => {
      const [v] = await wh.all<{ n: number; k: number }>(
        `SELECT count(*)::INT AS n, count(DISTINCT (keyword, location_code))::INT AS k FROM search_volume`,
      );
      expect(v).toEqual({ n: 1500, k: 1500 });
      const [m] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM search_volume_monthly`);
      expect(m!.n).toBeGreaterThanOrEqual(1500 * 12);
      expect(summary.rowsLoaded.total).toBe(1500 + m!.n);
    });
  });

  it('feeds search_volume_trends, whose sidecar tests pass', async () => {
    const r = await runModels({ warehouseDir: tmp.dir, test: true });
    expect(r.builds.find((b) => b.name === 'search_volume_trends')).toMatchObject({ status: 'built' });
    expect(r.ok).toBe(true);
    await withWarehouse(tmp.dir, async (wh) => {
      const [t] = await wh.all<{ k: number }>(`SELECT count(DISTINCT (keyword, location_code))::INT AS k FROM search_volume_trends`);
      expect(t!.k).toBe(1500);
    });
  });
});
