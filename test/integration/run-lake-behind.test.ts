import { createHash } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_STATS_PATH, startSandbox, type AdminStatsBody, type SandboxHandle } from '../../src/sandbox/index.js';
import { loadPipeline } from '../../src/config/index.js';
import { nightRunner } from '../../src/schedule/night-runner.js';
import { runPipeline } from '../../src/run/index.js';
import { RunStore, withWarehouse } from '../../src/warehouse/index.js';
import { getBytes, listKeys, startS3, type LocalS3 } from './lake-helpers.js';
import { movingClock, pipelineRun, silentLogger, tempDir } from './helpers.js';
import { filesUnder } from './kill-helpers.js';

/** A loopback proxy in front of the S3 server that dies (resets every connection) at the first request `die` picks, until `revive()`. */
async function dyingProxy(target: string, die: (method: string, path: string) => boolean) {
  const to = new URL(target);
  let down = false;
  let died = false;
  const server: Server = createServer((req, res) => {
    if (down || (!died && die(req.method ?? '', decodeURIComponent(req.url ?? '')))) {
      down = died = true;
      req.socket.destroy();
      return;
    }
    const up = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    isDown: () => down,
    revive: () => (down = false),
    /** Dies again at the next request `die` picks. */
    rearm: () => (died = false),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** Every object under `prefix` of the lake (key without the prefix → sha256). */
async function lakeFiles(s3: LocalS3, prefix: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const k of await listKeys(s3, prefix))
    out[k.slice(prefix.length)] = createHash('sha256')
      .update(await getBytes(s3, k))
      .digest('hex');
  return out;
}

const KEY = 'svc_live_testlakebehind';

describe('issue 43: the lake store dies during the run’s lake step', () => {
  let sandbox: SandboxHandle;
  let s3: LocalS3;
  let proxy: Awaited<ReturnType<typeof dyingProxy>>;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let file: string;
  const wh = () => join(tmp.dir, 'wh');

  beforeAll(async () => {
    tmp = await tempDir('run-lake-behind-');
    s3 = await startS3(join(tmp.dir, 's3'));
    // The check before anything is bought (list, put, delete a probe) passes; the first Parquet file put kills the store.
    proxy = await dyingProxy(s3.endpoint, (method, path) => method === 'PUT' && /\/(night|sched)\/parquet\//.test(path));
    sandbox = await startSandbox({ admin: true, readyAfterMs: 50 });
    file = join(tmp.dir, 'nightly.yaml');
    await writeFile(
      file,
      `name: nightly\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840, 2826]\n    keywords: [alpha, beta, gamma, delta, epsilon]\n`,
    );
  });
  afterAll(async () => {
    await sandbox.close();
    await proxy.close();
    await s3.close();
    await tmp.cleanup();
  });

  it('exits 9 (only the lake is behind), and the advised rerun buys nothing: it syncs the lake, which then equals parquet/', async () => {
    const env = { ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: sandbox.url, ...s3.env, AWS_ENDPOINT_URL: proxy.endpoint };
    const args = [file, '--warehouse', wh(), '--json', '--poll-interval', '0.05', '--lake', `s3://${s3.bucket}/night`];
    const taskPosts = () => sandbox.log.filter((l) => l.path.endsWith('/task_post')).length;
    const stats = async () => (await (await request(sandbox.url + ADMIN_STATS_PATH)).body.json()) as AdminStatsBody;

    const first = await pipelineRun(args, env);
    expect(proxy.isDown()).toBe(true);
    // Bought, loaded and published here; only the lake is behind: its own exit code, not 5 ("run again later").
    expect(first.code, first.stderr).toBe(9);
    const s1 = JSON.parse(first.stdout) as { runId: string; state: string; lakeBehind?: boolean; chargedCny: string };
    expect(s1).toMatchObject({ state: 'completed', lakeBehind: true });
    expect(taskPosts()).toBe(1);
    const bought = await stats();
    const local = await filesUnder(join(wh(), 'parquet'));
    expect(await lakeFiles(s3, 'night/parquet/')).not.toEqual(local);

    // The store is back; the next `pipeline run` finishes that run's lake step, and buys nothing.
    proxy.revive();
    const second = await pipelineRun(args, env);
    expect(second.code, second.stderr).toBe(0);
    const s2 = JSON.parse(second.stdout) as { runId: string; state: string; resumed?: boolean; lakeBehind?: boolean };
    expect(s2).toMatchObject({ runId: s1.runId, state: 'completed', resumed: true });
    expect(s2.lakeBehind).toBeUndefined();
    expect(second.stderr).not.toContain('already completed today');
    expect(taskPosts()).toBe(1);
    const after = await stats();
    expect(after.tasks_created_by_tag).toEqual(bought.tasks_created_by_tag);
    expect(Object.values(after.tasks_created_by_tag).every((n) => n === 1)).toBe(true);
    expect(after.charged_cny).toBe(bought.charged_cny);
    const runs = await withWarehouse(wh(), (w) => w.all<{ run_id: string; state: string }>(`SELECT run_id, state FROM runs`));
    expect(runs).toEqual([{ run_id: s1.runId, state: 'completed' }]);

    // The store holds exactly what was published: parquet/ file for file, and the serving catalog.
    expect(await lakeFiles(s3, 'night/parquet/')).toEqual(await filesUnder(join(wh(), 'parquet')));
    const serving = await lakeFiles(s3, 'night/serving.duckdb');
    expect(Object.keys(serving)).toEqual(['']);
  }, 120_000);

  it('a scheduled night after a night whose lake fell behind syncs that night first, buying nothing for it, then buys its own once', async () => {
    const dir = join(tmp.dir, 'wh-sched');
    const url = `s3://${s3.bucket}/sched`;
    const env = { ...process.env, ...s3.env, AWS_ENDPOINT_URL: proxy.endpoint };
    const taskPosts = () => sandbox.log.filter((l) => l.path.endsWith('/task_post')).length;
    const posts0 = taskPosts();
    proxy.revive();
    proxy.rearm();
    const night1 = await runPipeline({
      pipeline: await loadPipeline(file),
      file,
      warehouseDir: dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 50,
      now: movingClock('2026-11-20T02:00:00Z'),
      lake: url,
      env,
    });
    expect(night1).toMatchObject({ state: 'completed', lakeBehind: true });
    expect(taskPosts()).toBe(posts0 + 1);
    proxy.revive();

    // The next night's tick: the scheduler's runner, as `pipeline schedule` calls it.
    const tick = nightRunner({
      warehouseDir: dir,
      log: silentLogger,
      lakeFlag: url,
      target: async () => ({ baseUrl: sandbox.url, apiKey: KEY, pollIntervalMs: 50 }),
      extra: { now: movingClock('2026-11-21T02:00:00Z'), env },
    });
    const night2 = await tick({ name: 'nightly', file, schedule: '0 2 * * *', timezone: 'UTC' }, new AbortController().signal);
    expect(night2.runId).not.toBe(night1.runId);
    expect(night2.state).toBe('completed');
    // One POST for the second night, none for the first again; every task created once.
    expect(taskPosts()).toBe(posts0 + 2);
    const stats = (await (await request(sandbox.url + ADMIN_STATS_PATH)).body.json()) as AdminStatsBody;
    expect(Object.values(stats.tasks_created_by_tag).every((n) => n === 1)).toBe(true);
    await withWarehouse(dir, async (w) => {
      expect(await w.all(`SELECT run_id, state FROM runs ORDER BY started_at`)).toEqual([
        { run_id: night1.runId, state: 'completed' },
        { run_id: night2.runId, state: 'completed' },
      ]);
      expect(await RunStore.unfinishedRuns(w, 'nightly')).toEqual([]);
    });
    expect(await lakeFiles(s3, 'sched/parquet/')).toEqual(await filesUnder(join(dir, 'parquet')));
  }, 120_000);
});
