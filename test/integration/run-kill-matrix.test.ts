import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/client/index.js';
import { loadPipeline } from '../../src/config/index.js';
import { reconcile } from '../../src/ops/reconcile.js';
import { runExitCode, runPipeline } from '../../src/run/index.js';
import { ADMIN_STATS_PATH, startSandbox, type AdminStatsBody, type SandboxHandle } from '../../src/sandbox/index.js';
import { RunStore, withWarehouse } from '../../src/warehouse/index.js';
import { Receiver } from './alerts-helpers.js';
import { getBytes, listKeys, startS3, type LocalS3 } from './lake-helpers.js';
import { pipelineCli, silentLogger, tempDir } from './helpers.js';
import { filesUnder, killedAt } from './kill-helpers.js';

const KEY = 'svc_live_testkillmatrix';
const STEPS = ['ingest', 'clusters', 'models', 'alerts', 'publish', 'summary', 'checkpoint', 'lake'] as const;
/** Every step's start and middle; after the ingest's middle, the point between an embeddings answer landed and its vectors stored. */
const KILLS = STEPS.flatMap((step) => (['start', 'middle'] as const).map((phase) => `${step}:${phase}`)).flatMap((at) =>
  at === 'ingest:middle' ? [at, 'embeddings:middle'] : [at],
);
/** Tables whose rows the published Parquet and serving.duckdb must hold exactly. */
const TABLES = ['runs', 'tasks', 'ledger', 'serp_results', 'serp_items', 'alerts', 'keyword_clusters'];

/** A small pipeline: 3 SERP tasks, their embeddings (so clusters and their label calls), one spend alert a run. */
const PIPELINE = `name: kills
jobs:
  - kind: serp
    depth: 10
    locations: [2840]
    keywords: [trail shoes, road shoes, hiking boots]
  - kind: embeddings
    name: vectors
alerts:
  webhook: "\${ALERTS_WEBHOOK}"
  rules:
    - spend_over_cny: 0.0001
`;

describe('the kill matrix: SIGKILL at the start and in the middle of every step of a run, then the action the tool advises', () => {
  let sandbox: SandboxHandle;
  let s3: LocalS3;
  let receiver: Receiver;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let file: string;
  const wh = () => join(tmp.dir, 'wh');
  const lake = () => `s3://${s3.bucket}/kills`;
  const env = () => ({ ...process.env, ...s3.env, SVC_API_KEY: KEY, SVC_BASE_URL: sandbox.url, ALERTS_WEBHOOK: `${receiver.url}/hook` });

  beforeAll(async () => {
    tmp = await tempDir('run-kill-matrix-');
    s3 = await startS3(join(tmp.dir, 's3'));
    receiver = await Receiver.start();
    sandbox = await startSandbox({ admin: true, readyAfterMs: 10 });
    file = join(tmp.dir, 'kills.yaml');
    await writeFile(file, PIPELINE);
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
    await s3.close();
    await tmp.cleanup();
  });

  it(`${KILLS.length} kills: no task bought twice, no row lost, no alert delivered twice; parquet/, serving.duckdb and the lake hold the tables; reconcile is clean`, async () => {
    const e = env();
    /** `pipeline run` as the CLI runs it, in this process: what the tool advises after a crash. */
    const runAgain = async () =>
      runPipeline({
        pipeline: await loadPipeline(file, { env: e }),
        file,
        warehouseDir: wh(),
        baseUrl: sandbox.url,
        apiKey: KEY,
        logger: silentLogger,
        pollIntervalMs: 20,
        lake: lake(),
        env: e,
      });

    // One night, killed 17 times: each invocation is the one the tool advises after the kill before
    // it (`pipeline run` again), and is itself killed at the next point; the last is finished by
    // `pipeline lake sync`, as exit 9 and the README advise for a run that owes only its lake.
    for (const at of KILLS) {
      const out = await killedAt([file, wh(), sandbox.url, lake()], { ...e, PIPELINE_TEST_KILL_AT: at }).catch((err: Error) =>
        Promise.reject(new Error(`${at}: ${err.message}`)),
      );
      expect(out).toContain(`killed at ${at}`);
      const runs = await withWarehouse(wh(), (w) => w.all<{ run_id: string; state: string }>(`SELECT run_id, state FROM runs`));
      // ingest:start dies before its run exists; from then on every invocation resumes that one run, never a new one.
      expect(runs.length, at).toBe(at === 'ingest:start' ? 0 : 1);
    }
    const sync = await pipelineCli(['lake', 'sync', '--lake', lake(), '--warehouse', wh()], e);
    expect(sync.code, sync.stderr).toBe(0);
    const [night] = await withWarehouse(wh(), (w) => w.all<{ run_id: string; state: string }>(`SELECT run_id, state FROM runs`));
    expect(night!.state).toBe('completed');
    expect(sync.stdout).toContain(`run ${night!.run_id}: its lake step is done; the run is finished`);
    expect(await withWarehouse(wh(), (w) => RunStore.unfinishedRuns(w, 'kills'))).toEqual([]);
    // Finished: the next `pipeline run` is a new night (it does not resume the killed one), and buys its tasks once.
    const next = await runAgain();
    expect({ state: next.state, code: runExitCode(next), resumed: next.resumed }).toEqual({ state: 'completed', code: 0, resumed: false });
    expect(next.runId).not.toBe(night!.run_id);

    // Tasks bought twice: the emulator's record of every task POSTed, by tag.
    const stats = (await (await request(sandbox.url + ADMIN_STATS_PATH)).body.json()) as AdminStatsBody;
    const created = Object.entries(stats.tasks_created_by_tag);
    const boughtTwice = created.reduce((n, [, c]) => n + (c - 1), 0);
    const checks = await withWarehouse(wh(), async (w) => {
      const tasks = await w.all<{ tag: string; state: string; rows_loaded: number | null; task_id: string }>(
        `SELECT tag, state, rows_loaded, task_id FROM tasks`,
      );
      const byTag = new Map(tasks.map((t) => [t.tag, t]));
      // Rows lost: a task the service created that is not collected, or collected with fewer rows than its result holds.
      const [rows] = await w.all<{ results: number; items: number }>(
        `SELECT (SELECT count(*) FROM serp_results)::INT AS results, (SELECT count(*) FROM serp_items)::INT AS items`,
      );
      const notCollected = created.filter(([tag]) => byTag.get(tag)?.state !== 'collected').length;
      const runs = await w.all<{ run_id: string; state: string }>(`SELECT run_id, state FROM runs ORDER BY started_at`);
      const counts: Record<string, number> = {};
      for (const t of TABLES) counts[t] = Number((await w.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ${t}`))[0]!.n);
      const alertRows = await w.all<{ id: string; state: string }>(`SELECT alert_id AS id, delivery_state AS state FROM alerts`);
      const client = new ServiceClient({ baseUrl: sandbox.url, apiKey: KEY, land: async () => {} });
      const rec = await reconcile(w, client);
      const [labels] = await w.all<{ n: number }>(`SELECT count(*)::INT AS n FROM keyword_cluster_labels`);
      // Charged calls bought twice: two calls of the ledger with a charge that asked the same request
      // (the raw index names each call's request by its hash); and charged calls whose request is unknown.
      const [charged] = await w.all<{ calls: number; requests: number; unnamed: number; v1: number }>(
        `SELECT count(*)::INT AS calls, count(DISTINCT r.request_hash)::INT AS requests, count(*) FILTER (r.request_hash IS NULL)::INT AS unnamed,
                count(*) FILTER (l.path LIKE '/v1/%')::INT AS v1
         FROM ledger l LEFT JOIN raw_responses r USING (call_id) WHERE l.charge_cny IS NULL OR l.charge_cny > 0`,
      );
      return {
        notCollected,
        rows: rows!,
        runs,
        counts,
        alertRows,
        discrepancies: rec.discrepancies,
        tasks: tasks.length,
        labels: labels!.n,
        charged: charged!,
      };
    });
    const acknowledged = receiver.acknowledgedIds();
    const alertsTwice = acknowledged.length - new Set(acknowledged).size;
    const report = {
      kills: KILLS.length,
      tasksBoughtTwice: boughtTwice,
      tasksCreated: created.length,
      rowsLost: checks.notCollected + (checks.tasks - checks.rows.results),
      alertsDeliveredTwice: alertsTwice,
      alertsDelivered: acknowledged.length,
      // Charged calls of the ledger (any kind: /v3 posts, /v1 labels and embeddings) that asked a request asked before.
      chargedCalls: checks.charged.calls,
      chargedCallsTwice: checks.charged.calls - checks.charged.requests,
      chargedCallsUnnamed: checks.charged.unnamed,
      // /v1 calls the emulator answered beyond those of the ledger (each a charged call: a label, a batch of embeddings).
      v1CallsTwice: sandbox.log.filter((l) => l.path.startsWith('/v1/')).length - checks.charged.v1,
      // A cluster label (a charged /v1 chat call) asked again: killed after its answer, before its label was kept.
      labelCallsTwice: sandbox.log.filter((l) => l.path.includes('/chat/')).length - checks.labels,
    };
    console.log(`kill matrix: ${JSON.stringify(report)}`);
    // Never pay twice, every way back: a kill between a paid answer landed and what it says kept
    // (a label at clusters:middle, a batch of vectors at embeddings:middle) reads the answer back.
    expect(report).toMatchObject({
      kills: 17,
      tasksBoughtTwice: 0,
      rowsLost: 0,
      alertsDeliveredTwice: 0,
      chargedCallsTwice: 0,
      chargedCallsUnnamed: 0,
      v1CallsTwice: 0,
      labelCallsTwice: 0,
    });
    expect(checks.tasks).toBe(created.length);
    // The killed night and the next, both completed; 3 tasks each, each bought once.
    expect(checks.runs).toHaveLength(2);
    expect(checks.runs.every((r) => r.state === 'completed')).toBe(true);
    expect(created).toHaveLength(6);
    // One spend alert a run, each delivered once.
    expect(checks.alertRows).toHaveLength(2);
    expect(checks.alertRows.every((a) => a.state === 'delivered')).toBe(true);
    expect(new Set(acknowledged)).toEqual(new Set(checks.alertRows.map((a) => a.id)));
    expect(checks.discrepancies).toEqual([]);

    // The published Parquet and serving.duckdb hold every row of the tables.
    const db = await DuckDBInstance.create(join(wh(), 'serving.duckdb'), { access_mode: 'READ_ONLY' });
    try {
      const c = await db.connect();
      await c.run(`SET file_search_path = '${wh().replaceAll("'", "''")}'`);
      for (const t of TABLES) {
        const serving = Number((await c.runAndReadAll(`SELECT count(*) FROM ${t}`)).getRows()[0]![0]);
        const parquet = Number(
          (
            await c.runAndReadAll(`SELECT count(*) FROM read_parquet('parquet/${t}/**/*.parquet', hive_partitioning = true)`)
          ).getRows()[0]![0],
        );
        expect({ t, serving, parquet }).toEqual({ t, serving: checks.counts[t], parquet: checks.counts[t] });
      }
      c.closeSync();
    } finally {
      db.closeSync();
    }
    // The lake holds parquet/ file for file.
    const remote: Record<string, string> = {};
    for (const k of await listKeys(s3, 'kills/parquet/'))
      remote[k.slice('kills/parquet/'.length)] = createHash('sha256')
        .update(await getBytes(s3, k))
        .digest('hex');
    expect(remote).toEqual(await filesUnder(join(wh(), 'parquet')));
  }, 300_000);
});
