import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { CallbackServer, InFlight, type LandedCallback } from '../../src/collect/index.js';
import { tempDir } from './helpers.js';

const SECRET = 'test-secret-0123456789';
const GET = endpoint('serp.engA.organic.task_get.advanced');
const ID = '6f1c2a8e-1d2b-4c3d-8e4f-5a6b7c8d9e0f';
const OTHER = '11111111-2222-4333-8444-555555555555';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((f) => f()));
});

/** A task_get envelope as the service's postback carries it. */
function envelope(id: string, status = 20000) {
  return {
    version: '0.1',
    status_code: 20000,
    status_message: 'Ok.',
    time: '0.01 sec.',
    cost: 0,
    tasks_count: 1,
    tasks_error: status === 20000 ? 0 : 1,
    tasks: [
      {
        id,
        status_code: status,
        status_message: status === 20000 ? 'Ok.' : 'Task failed.',
        time: '0.01 sec.',
        cost: 0,
        result_count: 1,
        path: ['v3', 'serp', 'engA', 'organic', 'task_get', 'advanced', id],
        data: { api: 'serp', function: 'task_get', keyword: 'oak desk', tag: 't1' },
        result:
          status === 20000
            ? [
                {
                  keyword: 'oak desk',
                  type: 'organic',
                  se_domain: 'engA.com',
                  location_code: 2840,
                  language_code: 'en',
                  check_url: 'https://engA.com/?q=oak',
                  datetime: '2026-03-02 08:05:00 +00:00',
                  item_types: ['organic'],
                  se_results_count: 1,
                  items_count: 1,
                  items: [
                    {
                      type: 'organic',
                      rank_group: 1,
                      rank_absolute: 1,
                      domain: 'oak.example',
                      url: 'https://oak.example/',
                      title: 'Oak desks',
                    },
                  ],
                },
              ]
            : null,
      },
    ],
  };
}

async function server(
  opts: { maxBodyBytes?: number; maxUnzippedBytes?: number; tags?: string[]; callback?: 'postback' | 'pingback' } = {},
) {
  const wh = await tempDir('pipeline-push-server-');
  const posted = new InFlight();
  posted.sending(['t1'], GET);
  posted.answered(['t1'], [{ tag: 't1', taskId: ID }]);
  posted.recorded([ID]);
  const landed: LandedCallback[] = [];
  const pinged: string[] = [];
  const s = await CallbackServer.start({
    host: '127.0.0.1',
    port: 0,
    secret: SECRET,
    warehouseDir: wh.dir,
    runId: 'run-1',
    pipeline: 'p',
    maxBodyBytes: opts.maxBodyBytes ?? 1024 * 1024,
    maxUnzippedBytes: opts.maxUnzippedBytes ?? 4 * 1024 * 1024,
    inFlight: posted,
    callback: opts.callback ?? 'postback',
    idWaitMs: 2_000,
    onLanded: (c) => landed.push(c),
    onPinged: (t) => pinged.push(t.taskId),
    now: () => new Date('2026-03-02T08:05:00Z'),
  });
  open.push(async () => {
    await s.close();
    await wh.cleanup();
  });
  const rawFiles = async () =>
    (await readdir(join(wh.dir, 'raw'), { recursive: true }).catch(() => [] as string[])).filter((f) => f.endsWith('.ndjson.gz'));
  const post = async (
    path: string,
    body: Buffer,
    headers: Record<string, string> = { 'content-encoding': 'gzip', 'content-type': 'application/json' },
  ) => {
    const r = await request(`${s.localUrl}${path}`, { method: 'POST', body, headers });
    return { status: r.statusCode, text: await r.body.text() };
  };
  return { s, posted, landed, pinged, rawFiles, post, dir: wh.dir };
}

const gz = (v: unknown) => gzipSync(JSON.stringify(v));

describe('callback server', () => {
  it('lands a gzip postback of a posted task, then answers 200, and takes a repeat without landing it twice', async () => {
    const x = await server();
    const r = await x.post(`/${SECRET}/postback?id=${ID}&tag=t1`, gz(envelope(ID)));
    expect(r.status).toBe(200);
    expect(x.landed).toHaveLength(1);
    expect(x.landed[0]).toMatchObject({ taskId: ID, ok: true, statusCode: 20000 });
    expect(await x.rawFiles()).toHaveLength(1);
    x.posted.move(ID, 'landed');
    x.posted.move(ID, 'collected'); // the loader loaded it
    expect((await x.post(`/${SECRET}/postback?id=${ID}&tag=t1`, gz(envelope(ID)))).status).toBe(200);
    expect(await x.rawFiles()).toHaveLength(1);
  });

  it('matches the secret at the end of the path, so a proxy prefix is fine, and refuses a wrong secret with 403, landing nothing', async () => {
    const x = await server();
    expect((await x.post(`/hooks/etl/${SECRET}/postback?id=${ID}&tag=t1`, gz(envelope(ID)))).status).toBe(200);
    const wrong = await x.post(`/${SECRET.replace('t', 'T')}/postback?id=${ID}&tag=t1`, gz(envelope(ID)));
    const short = await x.post(`/x/postback?id=${ID}&tag=t1`, gz(envelope(ID)));
    expect([wrong.status, short.status]).toEqual([403, 403]);
    expect(x.landed).toHaveLength(1);
    expect(await x.rawFiles()).toHaveLength(1);
    expect(x.s.counts.refused[403]).toBe(2);
  });

  it('refuses a task id this run did not post with 404, and a body for another task with 400', async () => {
    const x = await server();
    expect((await x.post(`/${SECRET}/postback?id=${OTHER}&tag=zz`, gz(envelope(OTHER)))).status).toBe(404);
    expect((await x.post(`/${SECRET}/postback?id=${ID}&tag=t1`, gz(envelope(OTHER)))).status).toBe(400);
    expect((await x.post(`/${SECRET}/postback?id=not-a-uuid`, gz(envelope(ID)))).status).toBe(400);
    expect(x.landed).toHaveLength(0);
    expect(await x.rawFiles()).toEqual([]);
  });

  it('refuses a body over the size limit and a gzip bomb with 413, landing nothing', async () => {
    const x = await server({ maxBodyBytes: 64 * 1024, maxUnzippedBytes: 1024 * 1024 });
    const big = Buffer.alloc(200 * 1024, 1); // random-ish bytes would not compress; this is sent as is
    expect((await x.post(`/${SECRET}/postback?id=${ID}&tag=t1`, big, { 'content-type': 'application/json' })).status).toBe(413);
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 32)); // 50 MB of spaces, about 50 KB gzipped
    expect(bomb.length).toBeLessThan(64 * 1024);
    expect((await x.post(`/${SECRET}/postback?id=${ID}&tag=t1`, bomb)).status).toBe(413);
    expect(
      (await x.post(`/${SECRET}/postback?id=${ID}&tag=t1`, Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' })).status,
    ).toBe(400);
    expect(x.landed).toHaveLength(0);
    expect(await x.rawFiles()).toEqual([]);
    expect(x.s.counts.refused[413]).toBe(2);
  });

  it('answers a pingback GET at once and hands the task over to be fetched', async () => {
    const x = await server({ callback: 'pingback' });
    const r = await request(`${x.s.localUrl}/${SECRET}/pingback?id=${ID}&tag=t1`);
    expect(r.statusCode).toBe(200);
    await r.body.text();
    expect(x.pinged).toEqual([ID]);
    const wrongMethod = await request(`${x.s.localUrl}/${SECRET}/pingback?id=${ID}&tag=t1`, { method: 'POST', body: 'x' });
    expect(wrongMethod.statusCode).toBe(405);
    await wrongMethod.body.text();
  });

  it('holds a callback that beats its POST answer until the task id is known', async () => {
    const x = await server();
    const early = '22222222-3333-4444-8555-666666666666';
    x.posted.sending(['t2'], GET);
    const pending = x.post(`/${SECRET}/postback?id=${early}&tag=t2`, gz(envelope(early)));
    await new Promise((r) => setTimeout(r, 100));
    expect(x.landed).toHaveLength(0);
    x.posted.answered(['t2'], [{ tag: 't2', taskId: early }]);
    expect((await pending).status).toBe(200);
    expect(x.landed.map((l) => l.taskId)).toEqual([early]);
  });

  it('takes no callback once closed, so the service lists the task for pull', async () => {
    const x = await server();
    const url = x.s.localUrl;
    await x.s.close();
    await expect(request(`${url}/${SECRET}/postback?id=${ID}&tag=t1`, { method: 'POST', body: gz(envelope(ID)) })).rejects.toThrow();
    expect(x.landed).toHaveLength(0);
  });
});
