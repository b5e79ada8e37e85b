import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline, type RunOutcome } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger, tempDir } from './helpers.js';

const FILE = 'pipelines/research.yaml';

describe('pipeline run of a pipeline with an embeddings job builds the keyword clusters (pipelines/research.yaml)', () => {
  let sandbox: SandboxHandle;
  let wh: { dir: string; cleanup: () => Promise<void> };
  let outcome: RunOutcome;
  const now = movingClock('2026-11-20T09:00:00Z');

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 5, now, readyAfterMs: 50 });
    wh = await tempDir('clusters-');
    outcome = await runPipeline({
      pipeline: await loadPipeline(FILE),
      file: FILE,
      warehouseDir: wh.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testdemo',
      logger: silentLogger,
      pollIntervalMs: 50,
      now,
    });
  }, 240_000);

  afterAll(async () => {
    await sandbox.close();
    await wh.cleanup();
  });

  it('clusters and labels every keyword the run embedded, with chat calls in the run ledger', async () => {
    expect(outcome.state).toBe('completed');
    expect(outcome.clusters).toHaveLength(1);
    const c = outcome.clusters![0]!;
    expect(c.job).toBe('vectors');
    expect(c.keywords).toBeGreaterThan(2);
    expect(c.clusters).toBeGreaterThanOrEqual(2);
    expect(c.labelCalls).toBe(c.clusters);
    await withWarehouse(wh.dir, async (db) => {
      const [members] = await db.all<{ n: number; clusters: number }>(
        `SELECT count(*)::INT AS n, count(DISTINCT cluster_id)::INT AS clusters FROM keyword_clusters`,
      );
      expect(members).toEqual({ n: c.keywords, clusters: c.clusters });
      const summary = await db.all<{ label: string | null; size: number }>(
        `SELECT label, size::INT AS size FROM keyword_cluster_summary ORDER BY size DESC`,
      );
      expect(summary).toHaveLength(c.clusters);
      for (const s of summary) expect(s.label?.trim().length).toBeGreaterThan(0);
      expect(summary.reduce((a, s) => a + s.size, 0)).toBe(c.keywords);
      // The labels were bought by this run: its ledger holds the chat calls.
      const [chat] = await db.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ledger WHERE run_id = $1 AND path LIKE '%chat%'`, [
        outcome.runId,
      ]);
      expect(chat!.n).toBe(c.labelCalls);
      // The run's spend mart, as published, counts those calls too: it is built after them.
      const [spend] = await db.all<{ ledger: string; mart: string; calls: number; martCalls: number }>(
        `SELECT (SELECT sum(charge_cny) FROM ledger WHERE run_id = $1)::VARCHAR AS ledger,
                (SELECT sum(charge_cny) FROM spend_daily WHERE run_id = $1)::VARCHAR AS mart,
                (SELECT count(*) FROM ledger WHERE run_id = $1 AND task_id IS NULL)::INT AS calls,
                (SELECT sum(calls) FROM spend_daily WHERE run_id = $1)::INT AS martCalls`,
        [outcome.runId],
      );
      expect(spend!.mart).toBe(spend!.ledger);
      expect(spend!.martCalls).toBe(spend!.calls);
      const [published] = await db.all<{ chat: number }>(
        `SELECT sum(calls)::INT AS chat FROM read_parquet('${wh.dir}/parquet/spend_daily/**/*.parquet', hive_partitioning = true) WHERE endpoint_id LIKE '%chat%'`,
      );
      expect(published!.chat).toBe(c.labelCalls);
    });
  });
});
