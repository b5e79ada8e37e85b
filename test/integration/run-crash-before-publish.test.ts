import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_STATS_PATH, startSandbox, type AdminStatsBody, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { killWhenSaid, pipelineRun, tempDir } from './helpers.js';

const KEY = 'svc_live_testcrashpub';
const CHILD = fileURLToPath(new URL('./run-kill-child.ts', import.meta.url));
const TASKS = 10; // 5 keywords x 2 locations: one POST

describe('killed after its loads committed and before it published, a run is finished by the rerun, which buys nothing', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let file: string;
  const whDir = () => join(tmp.dir, 'wh');
  const env = () => ({ ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: sandbox.url });
  const rerun = (json = true) => pipelineRun([file, '--warehouse', whDir(), ...(json ? ['--json'] : []), '--poll-interval', '0.05'], env());
  const stats = async () => (await (await request(sandbox.url + ADMIN_STATS_PATH)).body.json()) as AdminStatsBody;
  const taskPosts = () => sandbox.log.filter((l) => l.path.endsWith('/task_post')).length;

  /** What the warehouse knows: its runs, its tasks by run, and the task_post calls and CNY of its ledger. */
  const stored = () =>
    withWarehouse(whDir(), async (wh) => ({
      runs: await wh.all<{ run_id: string; state: string }>(`SELECT run_id, state FROM runs ORDER BY started_at, run_id`),
      tasks: await wh.all<{ run_id: string; tag: string; state: string }>(`SELECT run_id, tag, state FROM tasks ORDER BY tag`),
      ledger: (
        await wh.all<{ posts: number; charged: string; calls: number }>(
          `SELECT count(*) FILTER (WHERE path LIKE '%/task_post')::INT AS posts, coalesce(sum(charge_cny), 0)::VARCHAR AS charged, count(*)::INT AS calls FROM ledger`,
        )
      )[0]!,
    }));

  /** The serving catalog a reader opens, and the Parquet under it, read back independently. */
  async function published(runId: string) {
    const db = await DuckDBInstance.create(join(whDir(), 'serving.duckdb'), { access_mode: 'READ_ONLY' });
    try {
      const c = await db.connect();
      await c.run(`SET file_search_path = '${whDir().replaceAll("'", "''")}'`);
      const r = await c.runAndReadAll(
        `SELECT (SELECT count(*) FROM serp_results WHERE run_id = '${runId}')::INT AS serving_results,
                (SELECT count(*) FROM tasks WHERE run_id = '${runId}' AND state = 'collected')::INT AS serving_tasks,
                (SELECT any_value(state) FROM runs WHERE run_id = '${runId}') AS serving_run_state,
                (SELECT count(*) FROM read_parquet('parquet/serp_results/**/*.parquet', hive_partitioning = true) WHERE run_id = '${runId}')::INT AS parquet_results`,
      );
      const row = r.getRowObjectsJS()[0];
      c.closeSync();
      return row;
    } finally {
      db.closeSync();
    }
  }

  beforeEach(async () => {
    sandbox = await startSandbox({ admin: true, readyAfterMs: 50 });
    tmp = await tempDir('pipeline-crash-publish-');
    file = join(tmp.dir, 'nightly.yaml');
    await writeFile(
      file,
      `name: nightly\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840, 2826]\n    keywords: [alpha, beta, gamma, delta, epsilon]\n`,
    );
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it.each([
    { step: 'ingest', json: true },
    { step: 'models', json: false },
  ])(
    'killed once the $step step is done: the rerun (json $json) resumes it under its id, posts nothing, publishes its rows and exits with its outcome',
    async ({ step, json }) => {
      // The child says the step is done, and is killed there: the run never reaches its next step.
      const killed = await killWhenSaid(CHILD, [file, whDir(), sandbox.url, step], env(), 'at ');
      expect(killed.said).toBe(`at ${step}\n`);

      // The crash left every task collected and loaded, and nothing published.
      const before = await stored();
      expect(before.runs).toHaveLength(1);
      const first = before.runs[0]!.run_id;
      expect(before.tasks).toHaveLength(TASKS);
      expect(before.tasks.every((t) => t.run_id === first && t.state === 'collected')).toBe(true);
      expect(before.ledger.posts).toBe(1);
      expect(existsSync(join(whDir(), 'serving.duckdb'))).toBe(false);
      const statsBefore = await stats();
      const callsBefore = sandbox.log.length;
      expect(taskPosts()).toBe(1);

      const out = await rerun(json);

      // Nothing bought again: no task_post, no charge, not a call to the service.
      const after = await stored();
      expect(after.ledger).toEqual(before.ledger); // task_post calls and CNY charged unchanged
      expect(taskPosts()).toBe(1);
      const statsAfter = await stats();
      expect(statsAfter.tasks_created_by_tag).toEqual(statsBefore.tasks_created_by_tag);
      expect(statsAfter.charged_cny).toBe(statsBefore.charged_cny);
      expect(sandbox.log.length).toBe(callsBefore);
      expect(after.runs).toEqual([{ run_id: first, state: 'completed' }]);
      expect(after.tasks).toEqual(before.tasks); // the rerun's tasks are the first run's

      // It says it resumed that run, and exits with its outcome (completed: 0).
      expect(out.code).toBe(0);
      if (json) {
        const summary = JSON.parse(out.stdout) as { runId: string; state: string; resumed?: boolean; tasks: Record<string, number> };
        expect(summary).toMatchObject({
          runId: first,
          state: 'completed',
          resumed: true,
          tasks: { planned: TASKS, posted: TASKS, collected: TASKS },
        });
      } else {
        expect(out.stderr).toContain(`resuming unfinished run ${first}`);
        expect(out.stdout).toContain(`run ${first}  pipeline nightly  completed`);
        expect(out.stdout).toContain(`collected ${TASKS}`);
        expect(out.stdout).toContain('  resumed    an earlier unfinished run, finished under its id');
      }

      // Its rows are published: the Parquet and the serving catalog hold them, and its finished state.
      expect(await published(first)).toEqual({
        serving_results: TASKS,
        serving_tasks: TASKS,
        serving_run_state: 'completed',
        parquet_results: TASKS,
      });

      // That run is now finished: the next `pipeline run` is a new night, which buys tonight's tasks once.
      const next = await rerun();
      expect(next.code).toBe(0);
      const night = JSON.parse(next.stdout) as { runId: string; state: string; resumed?: boolean };
      expect(night.runId).not.toBe(first);
      expect(night).toMatchObject({ state: 'completed', resumed: false });
      expect(taskPosts()).toBe(2);
      expect(Object.values((await stats()).tasks_created_by_tag).every((n) => n === 1)).toBe(true);
      expect((await stored()).runs).toEqual([
        { run_id: first, state: 'completed' },
        { run_id: night.runId, state: 'completed' },
      ]);
    },
    180_000,
  );
});
