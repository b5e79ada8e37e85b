import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline, type ProgressEvent, type RunSummary } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger, sumDecimals, tempDir } from './helpers.js';

const KEY = 'svc_live_testdemo';
const DAY = '2026-11-20T09:00:00Z';

describe('pipeline run pipelines/keywords.yaml against the emulator on loopback', () => {
  let sandbox: SandboxHandle;
  let wh: { dir: string; cleanup: () => Promise<void> };
  let summary: RunSummary;
  const progress: ProgressEvent[] = [];
  const now = movingClock(DAY);

  beforeAll(async () => {
    // A live-style key, so the emulator simulates real charges and the ledger has money to add up.
    sandbox = await startSandbox({ seed: 7, now, readyAfterMs: 100 });
    wh = await tempDir();
    const pipeline = await loadPipeline('pipelines/keywords.yaml');
    summary = await runPipeline({
      pipeline,
      file: 'pipelines/keywords.yaml',
      warehouseDir: wh.dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 50,
      collectTimeoutMs: 30_000,
      now,
      onProgress: (e) => progress.push(e),
    });
  });

  afterAll(async () => {
    await sandbox.close();
    await wh.cleanup();
  });

  it('posts every distinct task once and collects them all', async () => {
    const pipeline = await loadPipeline('pipelines/keywords.yaml');
    const [job, volumes] = pipeline.jobs;
    if (job?.kind !== 'serp' || volumes?.kind !== 'search_volume') throw new Error('keywords.yaml: a serp job, then a search_volume job');
    const distinct = new Set(job.keywords.map((k) => k.trim().toLowerCase())).size;
    const expected = distinct * job.locations.length * job.languages.length;
    const volumeTasks = volumes.locations.length * volumes.languages.length; // under 700 keywords: one task each
    expect(distinct).toBeLessThan(job.keywords.length); // the file holds a case-only repeat
    expect(summary.state).toBe('completed');
    const all = expected + volumeTasks;
    expect(summary.tasks).toEqual({ planned: all, posted: all, failed: 0, collected: all, pending: 0 });
    // The file sets a budget and nothing prices its endpoints yet: each buys one task alone first,
    // then the rest of its batch in one POST.
    const posts = sandbox.log.filter((l) => l.method === 'POST');
    expect(posts.map((p) => p.path).sort()).toEqual([
      '/v3/keywords_data/engA_ads/search_volume/task_post',
      '/v3/keywords_data/engA_ads/search_volume/task_post',
      '/v3/serp/engA/organic/task_post',
      '/v3/serp/engA/organic/task_post',
    ]);
    await withWarehouse(wh.dir, async (db) => {
      const rows = await db.all<{ n: number; k: number }>(
        `SELECT count(*)::INT AS n, count(DISTINCT (keyword, location_code))::INT AS k FROM serp_results`,
      );
      expect(rows[0]).toEqual({ n: expected, k: expected });
    });
  });

  it('stores every item of every task, with depth organic items each', async () => {
    await withWarehouse(wh.dir, async (db) => {
      const perTask = await db.all<{ task_id: string; items_count: number; n: number; organic: number; max_abs: number }>(
        `SELECT r.task_id, r.items_count, count(i.item_index)::INT AS n,
                count(*) FILTER (WHERE i.type = 'organic')::INT AS organic, max(i.rank_absolute) AS max_abs
         FROM serp_results r JOIN serp_items i USING (task_id, result_index) GROUP BY ALL`,
      );
      expect(perTask).toHaveLength(summary.rowsLoaded.serp_results); // one result per SERP task
      for (const t of perTask) {
        expect(t.n).toBe(t.items_count);
        expect(t.organic).toBe(100);
        expect(t.max_abs).toBe(t.n);
      }
      expect(summary.rowsLoaded.serp_items).toBe(perTask.reduce((a, t) => a + t.n, 0));
    });
  });

  it('stores the rank the service served: a second emulator with the same seed and day agrees', async () => {
    const twin = await startSandbox({ seed: 7, now, readyAfterMs: 0 });
    try {
      const res = await request(`${twin.url}/v3/serp/engA/organic/live/advanced`, {
        method: 'POST',
        headers: { authorization: 'Bearer svc_sandbox_twin', 'content-type': 'application/json' },
        body: JSON.stringify([{ keyword: 'trail running shoes', location_code: 2826, language_code: 'en', device: 'desktop', depth: 100 }]),
      });
      const body = (await res.body.json()) as {
        tasks: { result: { items: { type: string; rank_group: number; domain: string; url: string }[] }[] }[];
      };
      const served = body.tasks[0]!.result[0]!.items.filter((i) => i.type === 'organic').slice(0, 10);
      expect(served).toHaveLength(10);
      await withWarehouse(wh.dir, async (db) => {
        const stored = await db.all<{ rank_group: number; domain: string; url: string }>(
          `SELECT i.rank_group, i.domain, i.url FROM serp_items i JOIN serp_results r USING (task_id, result_index)
           WHERE r.keyword = 'trail running shoes' AND r.location_code = 2826 AND i.type = 'organic' AND i.rank_group <= 10
           ORDER BY i.rank_group`,
        );
        expect(stored).toEqual(served.map((i) => ({ rank_group: i.rank_group, domain: i.domain, url: i.url })));
      });
    } finally {
      await twin.close();
    }
  });

  it('keeps a ledger row per HTTP call whose CNY sum equals the charge headers sent', async () => {
    const sent = sandbox.log.map((l) => l.chargeCny);
    const expectedSum = sumDecimals(sent);
    expect(Number(expectedSum)).toBeGreaterThan(0);
    await withWarehouse(wh.dir, async (db) => {
      const [l] = await db.all<{ calls: number; charged: string; ids: number }>(
        `SELECT count(*)::INT AS calls, sum(charge_cny)::VARCHAR AS charged, count(DISTINCT request_id)::INT AS ids FROM ledger`,
      );
      expect(l!.calls).toBe(sandbox.log.length);
      expect(l!.ids).toBe(sandbox.log.length);
      expect(l!.charged).toBe(expectedSum);
      const ids = await db.all<{ request_id: string }>(`SELECT request_id FROM ledger ORDER BY request_id`);
      expect(ids.map((r) => r.request_id)).toEqual(sandbox.log.map((x) => x.requestId).sort());
    });
    expect(summary.chargedCny).toBe(expectedSum);
    // The last progress line already told the user what the run cost.
    const last = progress.filter((e) => e.kind === 'collect').at(-1);
    expect(last).toMatchObject({ kind: 'collect', pending: 0, chargedCny: expectedSum });
  });

  it('landed every body raw before parsing, readable by DuckDB itself', async () => {
    await withWarehouse(wh.dir, async (db) => {
      const [idx] = await db.all<{ n: number }>(`SELECT count(*)::INT AS n FROM raw_responses`);
      expect(idx!.n).toBe(sandbox.log.length);
      const [r] = await db.all<{ n: number; ok: number }>(
        `SELECT count(*)::INT AS n, count(*) FILTER (WHERE json_extract(body::JSON, '$.status_code')::INT = 20000)::INT AS ok
         FROM read_json('${join(wh.dir, 'raw')}/*/*.ndjson.gz', columns = {call_id: 'VARCHAR', body: 'VARCHAR'})`,
      );
      expect(r).toEqual({ n: sandbox.log.length, ok: sandbox.log.length });
    });
    const days = await readdir(join(wh.dir, 'raw'));
    const files = await readdir(join(wh.dir, 'raw', days[0]!));
    const lines: Record<string, unknown>[] = [];
    for (const f of files) {
      const text = gunzipSync(await readFile(join(wh.dir, 'raw', days[0]!, f))).toString('utf8');
      expect(text).not.toContain(KEY);
      for (const l of text.split('\n')) if (l.trim()) lines.push(JSON.parse(l));
    }
    expect(lines).toHaveLength(sandbox.log.length);
    const post = lines.filter((l) => l.path === '/v3/serp/engA/organic/task_post');
    expect(post).toHaveLength(2); // one task alone to learn the price (the budget), then the rest
    for (const p of post) expect(p).toMatchObject({ method: 'POST', http_status: 200 });
  });

  it('writes Parquet that read_parquet reads back, row for row', async () => {
    await withWarehouse(wh.dir, async (db) => {
      for (const table of ['serp_items', 'serp_results', 'ledger', 'tasks']) {
        const [a] = await db.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ${table}`);
        const [b] = await db.all<{ n: number }>(
          `SELECT count(*)::INT AS n FROM read_parquet('${join(wh.dir, 'parquet', table)}/*/*.parquet', hive_partitioning = true)`,
        );
        expect(b!.n).toBe(a!.n);
      }
    });
  });

  it('never stores the API key in the warehouse', async () => {
    await withWarehouse(wh.dir, async (db) => {
      const [r] = await db.all<{ key_kind: string; base_url: string }>(`SELECT key_kind, base_url FROM runs`);
      expect(r!.key_kind).toBe('live');
      const hits = await db.all(`SELECT * FROM tasks WHERE spec::VARCHAR LIKE '%svc_live%'`);
      expect(hits).toHaveLength(0);
    });
  });
});
