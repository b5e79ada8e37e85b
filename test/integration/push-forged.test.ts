import { createServer } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { endpoint, endpointPath } from '../../src/catalog/index.js';
import { CallbackServer, InFlight } from '../../src/collect/index.js';
import { parsePipeline } from '../../src/config/index.js';
import { landedLine, replay, writeDurably, type Warehouse } from '../../src/warehouse/index.js';
import { pushPipeline, pushWorld } from './push-helpers.js';

// The serious hole of issue 17: a postback to a URL of this run whose body also holds
// another pipeline's task (or an unknown one) must not touch that task's rows, neither
// when it arrives nor when its landed body is loaded later (after a crash, or by replay).

const SECRET = 'forged-test-secret-01234';
const GET = endpoint('serp.engA.organic.task_get.advanced');
const UNKNOWN = '99999999-8888-4777-8666-555555555555';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A task_get entry with `n` organic items on `domain`. */
function task(id: string, domain: string, n: number) {
  return {
    id,
    status_code: 20000,
    status_message: 'Ok.',
    time: '0.01 sec.',
    cost: 0,
    result_count: 1,
    path: ['v3', 'serp', 'engA', 'organic', 'task_get', 'advanced', id],
    data: { api: 'serp', function: 'task_get', keyword: `${domain} keyword`, tag: `${domain} tag` },
    result: [
      {
        keyword: `${domain} keyword`,
        type: 'organic',
        se_domain: 'engA.com',
        location_code: 2840,
        language_code: 'en',
        check_url: `https://engA.com/?q=${domain}`,
        datetime: '2026-11-20 09:00:00 +00:00',
        item_types: ['organic'],
        se_results_count: n,
        items_count: n,
        items: Array.from({ length: n }, (_, i) => ({
          type: 'organic',
          rank_group: i + 1,
          rank_absolute: i + 1,
          domain,
          url: `https://${domain}/${i}`,
          title: `${domain} title ${i}`,
        })),
      },
    ],
  };
}
const envelope = (...tasks: unknown[]) => ({
  version: '0.1',
  status_code: 20000,
  status_message: 'Ok.',
  time: '0.01 sec.',
  cost: 0,
  tasks_count: tasks.length,
  tasks_error: 0,
  tasks,
});

const victimPipeline = () =>
  parsePipeline(
    `name: victim\ncollection:\n  mode: pull\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: ["victim keyword"]\n`,
    'victim.yaml',
    {},
  );

async function victimRows(wh: Warehouse, id: string): Promise<string> {
  const items = await wh.all(`SELECT * FROM serp_items WHERE task_id = $1 ORDER BY ALL`, [id]);
  const results = await wh.all(`SELECT * FROM serp_results WHERE task_id = $1 ORDER BY ALL`, [id]);
  const tasks = await wh.all(`SELECT * FROM tasks WHERE task_id = $1`, [id]);
  return JSON.stringify({ items, results, tasks }, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
}

/** Rows of any table of the warehouse that mention `needle`, as `table: n`. */
async function mentions(wh: Warehouse, needles: string[]): Promise<Record<string, number>> {
  const tables = await wh.all<{ t: string }>(`SELECT table_name AS t FROM duckdb_tables() WHERE NOT temporary ORDER BY 1`);
  const out: Record<string, number> = {};
  for (const { t } of tables) {
    const cond = needles.map((n) => `x::VARCHAR ILIKE '%${n}%'`).join(' OR ');
    const [r] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM "${t}" AS x WHERE ${cond}`);
    if (r!.n > 0) out[t] = r!.n;
  }
  return out;
}

async function parquetMentions(wh: Warehouse, needles: string[]): Promise<Record<string, number>> {
  const files = (await readdir(join(wh.dir, 'parquet'), { recursive: true })).filter((f) => f.endsWith('.parquet'));
  expect(files.length).toBeGreaterThan(0);
  const out: Record<string, number> = {};
  for (const f of files) {
    const cond = needles.map((n) => `x::VARCHAR ILIKE '%${n}%'`).join(' OR ');
    const [r] = await wh.all<{ n: number }>(
      `SELECT count(*)::INT AS n FROM read_parquet('${join(wh.dir, 'parquet', f)}') AS x WHERE ${cond}`,
    );
    if (r!.n > 0) out[f] = r!.n;
  }
  return out;
}

async function rawText(dir: string): Promise<string> {
  const files = (await readdir(join(dir, 'raw'), { recursive: true })).filter((f) => f.endsWith('.ndjson.gz'));
  return (await Promise.all(files.map(async (f) => gunzipSync(await readFile(join(dir, 'raw', f))).toString('utf8')))).join('');
}

describe('a forged postback naming a task of this run', () => {
  it('lands and loads only that task: another pipeline’s task and an unknown id keep their rows, and no forged value reaches the warehouse or parquet/', async () => {
    let t = Date.parse('2026-11-20T09:00:00Z');
    const now = () => new Date(t);
    const w = await pushWorld({ readyAfterMs: 60_000 }, now);

    // The victim: another pipeline collects its task by pull.
    expect((await w.run(victimPipeline(), { collectTimeoutMs: 0 })).state).toBe('partial');
    t += 61_000;
    expect((await w.run(victimPipeline())).state).toBe('completed');
    const [victim] = await w.db((wh) => wh.all<{ task_id: string }>(`SELECT task_id FROM tasks WHERE pipeline = 'victim'`));
    const victimId = victim!.task_id;
    const before = await w.db((wh) => victimRows(wh, victimId));
    expect(JSON.parse(before).items.length).toBeGreaterThan(3);

    // The attacked run posts with callbacks; its tasks are not done yet.
    const port = await freePort();
    const pipeline = pushPipeline(2, ['mode: push', `listen: "127.0.0.1:${port}"`]);
    const first = await w.run(pipeline, { collectTimeoutMs: 0, callbackSecret: SECRET });
    expect(first.tasks).toMatchObject({ posted: 2, collected: 0 });
    const own = await w.db((wh) =>
      wh.all<{ tag: string; task_id: string }>(`SELECT tag, task_id FROM tasks WHERE run_id = $1 ORDER BY tag`, [first.runId]),
    );

    // The run's process, back only to take callbacks (as push-crash.test.ts), then gone.
    const posted = new InFlight();
    posted.sending(
      own.map((r) => r.tag),
      GET,
    );
    posted.answered(
      own.map((r) => r.tag),
      own.map((r) => ({ tag: r.tag, taskId: r.task_id })),
    );
    posted.recorded(own.map((r) => r.task_id));
    const ignored: string[][] = [];
    const server = await CallbackServer.start({
      host: '127.0.0.1',
      port,
      secret: SECRET,
      warehouseDir: w.dir,
      runId: first.runId,
      pipeline: pipeline.name,
      maxBodyBytes: 1 << 20,
      maxUnzippedBytes: 1 << 24,
      inFlight: posted,
      callback: 'postback',
      onLanded: () => {},
      onIgnored: (_id, ids) => ignored.push([...ids]),
      onPinged: () => {},
      now,
    });
    const target = own[0]!.task_id;
    const url = `http://127.0.0.1:${port}/${SECRET}/postback?id=${target}&tag=${own[0]!.tag}`;
    const send = async (body: unknown) => {
      const r = await request(url, { method: 'POST', body: gzipSync(JSON.stringify(body)), headers: { 'content-encoding': 'gzip' } });
      await r.body.text();
      return r.statusCode;
    };
    // Without the URL's task: refused. With it: only it lands.
    expect(await send(envelope(task(victimId, 'forged-victim.example', 3)))).toBe(400);
    expect(
      await send(
        envelope(
          task(victimId, 'forged-victim.example', 3),
          task(target, 'accepted-own.example', 2),
          task(UNKNOWN, 'forged-unknown.example', 3),
        ),
      ),
    ).toBe(200);
    expect(ignored).toEqual([[victimId, UNKNOWN]]);
    // The genuine callbacks come later (newer: they win for the run's own tasks).
    t += 61_000;
    await w.sb.flushCallbacks();
    await server.close();

    // The next run loads what landed, from the bodies alone.
    const second = await w.run(pipeline, { collection: { mode: 'pull' } });
    expect(second.state).toBe('completed');
    expect(w.calls('/task_get/')).toBe(1); // the victim's own fetch only: nothing fetched again
    const needles = ['forged', UNKNOWN];
    await w.db(async (wh) => {
      expect(await victimRows(wh, victimId)).toBe(before);
      expect(await mentions(wh, needles)).toEqual({});
      expect(await parquetMentions(wh, needles)).toEqual({});
      const [o] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM tasks WHERE run_id = $1 AND state = 'collected'`, [
        first.runId,
      ]);
      expect(o!.n).toBe(2);
      // A replay from raw/ alone gives the same.
      await replay(wh);
      expect(await victimRows(wh, victimId)).toBe(before);
      expect(await mentions(wh, needles)).toEqual({});
    });
    const raw = await rawText(w.dir);
    expect(/forged/i.test(raw)).toBe(false);
    expect(raw.includes(UNKNOWN)).toBe(false);
    expect(raw.includes(SECRET)).toBe(false);
  });

  it('a landed callback line from before the fix, holding other tasks, loads none of them on replay', async () => {
    let t = Date.parse('2026-11-20T09:00:00Z');
    const now = () => new Date(t);
    const w = await pushWorld({ readyAfterMs: 60_000 }, now);
    expect((await w.run(victimPipeline(), { collectTimeoutMs: 0 })).state).toBe('partial');
    t += 61_000;
    const done = await w.run(victimPipeline());
    expect(done.state).toBe('completed');
    const [victim] = await w.db((wh) => wh.all<{ task_id: string }>(`SELECT task_id FROM tasks`));
    const victimId = victim!.task_id;
    const before = await w.db((wh) => victimRows(wh, victimId));

    // A callback line as the old server landed it: no accepted task, the whole body.
    const line = landedLine(
      {
        callId: '0badc0de-0000-4000-8000-000000000000',
        receivedAt: now(),
        method: 'POST',
        path: endpointPath(GET, victimId),
        endpointId: GET.id,
        httpStatus: 200,
        charge: { requestId: null, chargeCny: null, costUsd: null, balanceCny: null },
        tasksSent: 0,
        body: JSON.stringify(envelope(task(victimId, 'forged-victim.example', 3), task(UNKNOWN, 'forged-unknown.example', 3))),
      },
      { runId: done.runId, pipeline: 'attacker' },
      { callback: true },
    );
    await writeDurably(
      join(w.dir, 'raw', '2026-11-20', `${line.kind}--${done.runId}-cb-000001-0badc0de.ndjson.gz`),
      gzipSync(`${line.line}\n`),
    );

    await w.db(async (wh) => {
      await replay(wh);
      expect(await victimRows(wh, victimId)).toBe(before);
      expect(await mentions(wh, ['forged', UNKNOWN])).toEqual({});
    });
  });
});
