import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { planPipeline } from '../../src/plan/index.js';
import { runPipeline, type RunSummary } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, sumDecimals, tempDir } from './helpers.js';

/** One job of every named kind and a generic one, live and standard mixed. */
const yaml = `name: every-kind
jobs:
  - kind: serp
    name: serp-live
    labels: [brand, q4]
    mode: live
    locations: [2840]
    keywords: [running shoes, trail shoes]
    depth: 20
  - kind: serp
    name: news
    type: news
    locations: [2840]
    keywords: [running shoes]
  - kind: search_volume
    name: volume-live
    mode: live
    locations: [2840]
    keywords: [running shoes, trail shoes]
  - kind: keywords_for_site
    name: site
    targets: [example.com]
    locations: [2840]
  - kind: keywords_for_keywords
    name: kfk
    keywords: [running shoes]
    locations: [2840]
  - kind: ad_traffic
    name: traffic
    keywords: [running shoes]
    bid: 2
    locations: [2840]
  - kind: trends
    name: trends
    keywords: [running shoes, trail shoes, hiking boots, sandals, slippers, socks]
    locations: [2840]
  - kind: labs
    name: related
    function: related_keywords
    keywords: [running shoes]
    locations: [2840]
  - kind: labs
    name: ranked
    function: ranked_keywords
    targets: [example.com]
    locations: [2840]
  - kind: backlinks
    name: links
    targets: [example.com]
  - kind: ai_volume
    name: ai
    keywords: [running shoes, trail shoes]
    locations: [2840]
  - kind: llm_responses
    name: llm
    prompts: [best running shoes?]
    models: [llm-alpha]
  - kind: endpoint
    name: products
    endpoint: merchant.engA.products.task_post
    params: { keyword: "{keyword}", location_code: 2840, language_code: en }
    keywords: [running shoes]
  - kind: embeddings
    name: vectors
`;

describe('every job kind runs against the emulator: live answers loaded at once, tasks collected, embeddings cached', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let summary: RunSummary;
  const pipeline = parsePipeline(yaml, 'every-kind.yaml', {});

  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-kinds-');
    summary = await runPipeline({
      pipeline,
      file: 'every-kind.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testkinds',
      logger: silentLogger,
      pollIntervalMs: 5,
    });
  }, 120_000);
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('buys each planned task exactly once and collects every one', async () => {
    const plan = planPipeline(pipeline, 'r');
    expect(plan.tasks).toHaveLength(15);
    expect(summary.state).toBe('completed');
    expect(summary.tasks).toMatchObject({ planned: 15, posted: 15, collected: 15, failed: 0 });
    // The emulator's own record: one call per live task, one POST per task_post endpoint.
    const posts = sandbox.log.filter((l) => l.method === 'POST' && (l.path.endsWith('/task_post') || l.path.includes('/live')));
    const taskCount = posts.length;
    expect(taskCount).toBe(10 + 5); // 10 live calls, 5 task_post endpoints with one task each
    await withWarehouse(tmp.dir, async (wh) => {
      const byJob = await wh.all<{ job: string; n: number; rows: number }>(
        `SELECT job, count(*)::INT AS n, sum(rows_loaded)::INT AS rows FROM tasks GROUP BY job ORDER BY job`,
      );
      for (const j of byJob) expect(j.rows, j.job).toBeGreaterThan(0);
      expect(Object.fromEntries(byJob.map((j) => [j.job, j.n]))).toEqual({
        ai: 1,
        kfk: 1,
        links: 1,
        llm: 1,
        news: 1,
        products: 1,
        ranked: 1,
        related: 1,
        'serp-live': 2,
        site: 1,
        traffic: 1,
        trends: 2,
        'volume-live': 1,
      });
    });
  });

  it('records each job with its labels, so tasks can be filtered by label', async () => {
    await withWarehouse(tmp.dir, async (wh) => {
      const jobs = await wh.all<{ job: string; kind: string; mode: string | null; labels: string }>(
        `SELECT job, kind, mode, labels::VARCHAR AS labels FROM run_jobs ORDER BY job`,
      );
      expect(jobs).toHaveLength(14);
      expect(jobs.find((j) => j.job === 'serp-live')).toEqual({ job: 'serp-live', kind: 'serp', mode: 'live', labels: '["brand","q4"]' });
      expect(jobs.find((j) => j.job === 'vectors')).toMatchObject({ kind: 'embeddings', mode: null, labels: '[]' });
      const [n] = await wh.all<{ n: number }>(
        `SELECT count(*)::INT AS n FROM tasks t JOIN run_jobs j USING (run_id, job) WHERE list_contains(j.labels::VARCHAR[], 'brand')`,
      );
      expect(n!.n).toBe(2);
    });
  });

  it('lands live answers in their typed tables, keyed by the task', async () => {
    await withWarehouse(tmp.dir, async (wh) => {
      const counts = async (table: string) => (await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ${table}`))[0]!.n;
      expect(await counts('serp_results')).toBe(3); // two live, one news task
      expect(await counts('trends_results')).toBe(2); // six keywords compared five and one
      expect(await counts('search_volume')).toBe(2);
      expect(await counts('labs_related_keywords')).toBeGreaterThan(0);
      expect(await counts('labs_ranked_keywords')).toBeGreaterThan(0);
      expect(await counts('backlinks_referring_domains')).toBeGreaterThan(0);
      expect(await counts('ai_keyword_volume')).toBe(2);
      expect(await counts('llm_responses')).toBe(1);
      const [live] = await wh.all<{ n: number }>(
        `SELECT count(*)::INT AS n FROM serp_results r JOIN tasks t ON t.task_id = r.task_id WHERE t.endpoint_id = 'serp.engA.organic.live.advanced'`,
      );
      expect(live!.n).toBe(2);
    });
  });

  it('embeds every planned keyword once, caches it, and puts each call in the ledger', async () => {
    const keywords = new Set(
      planPipeline(pipeline, 'r').tasks.flatMap((t) =>
        typeof t.spec.keyword === 'string' ? [t.spec.keyword] : ((t.spec.keywords as string[] | undefined) ?? []),
      ),
    );
    await withWarehouse(tmp.dir, async (wh) => {
      const rows = await wh.all<{ keyword: string }>(
        `SELECT keyword FROM keyword_embeddings WHERE model = 'text-embedding-3-small' AND dimensions = 256 ORDER BY keyword`,
      );
      expect(rows.map((r) => r.keyword)).toEqual([...keywords].sort());
      const ledger = await wh.all<{ endpoint_id: string; charge: string }>(`SELECT endpoint_id, charge_cny::VARCHAR AS charge FROM ledger`);
      expect(ledger.filter((l) => l.endpoint_id === 'v1.embeddings')).toHaveLength(1);
      expect(sumDecimals(ledger.map((l) => l.charge))).toBe(summary.chargedCny);
    });
  });

  it('a second run of a new run id finds every keyword embedding in the cache', async () => {
    const before = sandbox.log.filter((l) => l.path === '/v1/embeddings').length;
    await runPipeline({
      pipeline,
      file: 'every-kind.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testkinds',
      logger: silentLogger,
      pollIntervalMs: 5,
      newRun: true,
    });
    expect(sandbox.log.filter((l) => l.path === '/v1/embeddings').length).toBe(before);
  }, 120_000);
});

describe('a live answer landed but not loaded (a crash) is loaded from the landing, never bought again', () => {
  it('resumes: loads the landed answer, marks a lost one failed, and calls nothing live', async () => {
    const sandbox = await startSandbox({ readyAfterMs: 0 });
    const tmp = await tempDir('pipeline-live-resume-');
    try {
      const p = parsePipeline(
        `name: live-resume\njobs:\n  - kind: labs\n    function: related_keywords\n    keywords: [alpha, beta, gamma]\n    locations: [2840]\n`,
        'l.yaml',
        {},
      );
      const opts = {
        pipeline: p,
        file: 'l.yaml',
        warehouseDir: tmp.dir,
        baseUrl: sandbox.url,
        apiKey: 'svc_live_testresume',
        logger: silentLogger,
        pollIntervalMs: 5,
      };
      const first = await runPipeline(opts);
      expect(first.tasks).toMatchObject({ planned: 3, collected: 3 });
      // As if the process died after the answers were landed and before they were loaded;
      // and as if one call's answer never arrived although the service created the task.
      let lostTag = '';
      await withWarehouse(tmp.dir, async (wh) => {
        const [row] = await wh.all<{ tag: string }>(`SELECT tag FROM tasks ORDER BY tag LIMIT 1`);
        lostTag = row!.tag;
        await wh.run(`DELETE FROM labs_related_keywords`);
        await wh.run(`UPDATE tasks SET state = 'posted', collected_at = NULL, rows_loaded = NULL`);
        await wh.run(
          `UPDATE raw_responses SET task_ids = [] WHERE list_has_any(task_ids, (SELECT list(task_id) FROM tasks WHERE tag = $1))`,
          [lostTag],
        );
        await wh.run(`UPDATE runs SET state = 'running', finished_at = NULL`);
      });
      const liveCalls = () => sandbox.log.filter((l) => l.path.includes('/live')).length;
      const before = liveCalls();
      const second = await runPipeline(opts);
      expect(second.resumed).toBe(true);
      expect(liveCalls()).toBe(before);
      await withWarehouse(tmp.dir, async (wh) => {
        const states = await wh.all<{ tag: string; state: string; status_message: string | null }>(
          `SELECT tag, state, status_message FROM tasks ORDER BY tag`,
        );
        expect(states.filter((s) => s.state === 'collected')).toHaveLength(2);
        const lost = states.find((s) => s.tag === lostTag)!;
        expect(lost.state).toBe('failed');
        expect(lost.status_message).toContain('not bought twice');
        const [n] = await wh.all<{ n: number }>(`SELECT count(DISTINCT task_id)::INT AS n FROM labs_related_keywords`);
        expect(n!.n).toBe(2);
      });
    } finally {
      await sandbox.close();
      await tmp.cleanup();
    }
  }, 120_000);
});
