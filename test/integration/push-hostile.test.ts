import { connect, type Socket } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { CallbackServer, InFlight, type CallbackServerOptions, type LandedCallback } from '../../src/collect/index.js';
import { resolveCollection } from '../../src/config/index.js';
import { tempDir } from './helpers.js';

// Attacks on the callback server over loopback: each shows what is refused, that nothing
// of the attack lands under raw/, and that the server still answers genuine callbacks.

const SECRET = 'hostile-secret-0123456789';
const GET = endpoint('serp.engA.organic.task_get.advanced');
const IDS = Array.from({ length: 8 }, (_, i) => `6f1c2a8e-1d2b-4c3d-8e4f-5a6b7c8d9e0${i}`);
const ID = IDS[0]!;
const FOREIGN = '11111111-2222-4333-8444-555555555555';
const UNKNOWN = '99999999-8888-4777-8666-555555555555';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((f) => f()));
});

/** One task of a task_get envelope; `domain` is the value an attack tries to plant. */
function task(id: string, domain: string) {
  return {
    id,
    status_code: 20000,
    status_message: 'Ok.',
    time: '0.01 sec.',
    cost: 0,
    result_count: 1,
    path: ['v3', 'serp', 'engA', 'organic', 'task_get', 'advanced', id],
    data: {
      api: 'serp',
      function: 'task_get',
      keyword: 'oak desk',
      tag: 't',
      postback_url: `http://127.0.0.1:9/${SECRET}/postback?id=$id&tag=$tag`,
    },
    result: [
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
        items: [{ type: 'organic', rank_group: 1, rank_absolute: 1, domain, url: `https://${domain}/`, title: domain }],
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
const gz = (v: unknown) => gzipSync(JSON.stringify(v));

async function server(extra: Partial<CallbackServerOptions> = {}) {
  const wh = await tempDir('pipeline-push-hostile-');
  const posted = new InFlight();
  const tags = IDS.map((_, i) => `t${i}`);
  posted.sending(tags, GET);
  posted.answered(
    tags,
    IDS.map((taskId, i) => ({ tag: `t${i}`, taskId })),
  );
  posted.recorded(IDS);
  const landed: LandedCallback[] = [];
  const pinged: string[] = [];
  const ignored: string[][] = [];
  const s = await CallbackServer.start({
    host: '127.0.0.1',
    port: 0,
    secret: SECRET,
    warehouseDir: wh.dir,
    runId: 'run-1',
    pipeline: 'p',
    maxBodyBytes: 1024 * 1024,
    maxUnzippedBytes: 4 * 1024 * 1024,
    inFlight: posted,
    callback: 'postback',
    idWaitMs: 500,
    onLanded: (c) => landed.push(c),
    onIgnored: (_id, ids) => ignored.push([...ids]),
    onPinged: (t) => pinged.push(t.taskId),
    now: () => new Date('2026-03-02T08:05:00Z'),
    ...extra,
  });
  open.push(async () => {
    await s.close();
    await wh.cleanup();
  });
  /** Every landed line under raw/, as text. */
  const rawText = async () => {
    const files = (await readdir(join(wh.dir, 'raw'), { recursive: true }).catch(() => [] as string[])).filter((f) =>
      f.endsWith('.ndjson.gz'),
    );
    const texts = await Promise.all(files.map(async (f) => gunzipSync(await readFile(join(wh.dir, 'raw', f))).toString('utf8')));
    return { files, text: texts.join('') };
  };
  const post = async (path: string, body: Buffer) => {
    const r = await request(`${s.localUrl}${path}`, {
      method: 'POST',
      body,
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
    });
    return { status: r.statusCode, text: await r.body.text() };
  };
  return { s, posted, landed, pinged, ignored, rawText, post };
}

describe('callback server under attack', () => {
  it('refuses by default a body over 16 MB once unzipped (32 padded bodies of 256 MB at once held several GB)', async () => {
    const c = resolveCollection(undefined, { mode: 'push' });
    if (c.mode !== 'push') throw new Error('push expected');
    const x = await server({ maxUnzippedBytes: c.maxUnzippedBytes });
    const padded = (mb: number) =>
      gzipSync(JSON.stringify({ ...envelope(task(ID, 'genuine.example')), pad: 'A'.repeat(mb * 1024 * 1024) }));
    const big = await x.post(`/${SECRET}/postback?id=${ID}&tag=t0`, padded(17));
    expect(big.status).toBe(413);
    expect(big.text).toMatch(/over the 16777216-byte limit once unzipped/);
    expect(x.landed).toEqual([]);
    const ok = await x.post(`/${SECRET}/postback?id=${ID}&tag=t0`, padded(15));
    expect(ok.status).toBe(200);
    expect(x.landed.map((l) => l.taskId)).toEqual([ID]);
  });

  it('lands only the task the URL names from a body that holds other tasks, and logs the others', async () => {
    const x = await server();
    const body = envelope(task(FOREIGN, 'forged-foreign.example'), task(ID, 'genuine.example'), task(UNKNOWN, 'forged-unknown.example'));
    const r = await x.post(`/${SECRET}/postback?id=${ID}&tag=t0`, gz(body));
    expect(r.status).toBe(200);
    expect(x.landed).toHaveLength(1);
    expect(x.landed[0]).toMatchObject({ taskId: ID, ok: true, ignored: [FOREIGN, UNKNOWN] });
    expect(x.landed[0]!.index.taskIds).toEqual([ID]);
    expect(x.ignored).toEqual([[FOREIGN, UNKNOWN]]);
    expect(x.s.counts.ignoredTasks).toBe(2);
    const raw = await x.rawText();
    expect(raw.files).toHaveLength(1);
    expect(raw.text).toContain('genuine.example');
    expect(raw.text).toContain(`"callback_task":"${ID}"`);
    expect(raw.text).not.toContain('forged');
    expect(raw.text).not.toContain(FOREIGN);
    expect(raw.text).not.toContain(UNKNOWN);
  });

  it('refuses with 400 a body without the task its URL names, or with it twice, landing nothing', async () => {
    const x = await server();
    const without = await x.post(`/${SECRET}/postback?id=${ID}&tag=t0`, gz(envelope(task(FOREIGN, 'forged-foreign.example'))));
    const twice = await x.post(
      `/${SECRET}/postback?id=${ID}&tag=t0`,
      gz(envelope(task(ID, 'forged-a.example'), task(ID, 'forged-b.example'))),
    );
    const notEnvelope = await x.post(`/${SECRET}/postback?id=${ID}&tag=t0`, gz({ id: ID }));
    expect([without.status, twice.status, notEnvelope.status]).toEqual([400, 400, 400]);
    expect(x.landed).toEqual([]);
    expect((await x.rawText()).files).toEqual([]);
  });

  it('never lands the callback secret: the URL echoed in a body is cut out', async () => {
    const x = await server();
    expect((await x.post(`/${SECRET}/postback?id=${ID}&tag=t0`, gz(envelope(task(ID, 'genuine.example'))))).status).toBe(200);
    const raw = await x.rawText();
    expect(raw.text).toContain('/***/postback?id=$id');
    expect(raw.text).not.toContain(SECRET);
  });

  it('answers only the kind of callback its URLs were given for', async () => {
    const x = await server();
    const ping = await request(`${x.s.localUrl}/${SECRET}/pingback?id=${ID}&tag=t0`);
    expect(ping.statusCode).toBe(404);
    await ping.body.text();
    expect(x.pinged).toEqual([]);

    const y = await server({ callback: 'pingback' });
    expect((await y.post(`/${SECRET}/postback?id=${ID}&tag=t0`, gz(envelope(task(ID, 'forged.example'))))).status).toBe(404);
    expect(y.landed).toEqual([]);
    expect((await y.rawText()).files).toEqual([]);
    const genuine = await request(`${y.s.localUrl}/${SECRET}/pingback?id=${ID}&tag=t0`);
    expect(genuine.statusCode).toBe(200);
    await genuine.body.text();
    expect(y.pinged).toEqual([ID]);
  });

  it('answers genuine callbacks within the 10-second rule while 200 slow connections are open, and closes the slow ones', async () => {
    const x = await server({ headersTimeoutMs: 2_000, bodyTimeoutMs: 3_000 });
    const port = x.s.port;
    const closed: number[] = [];
    const sockets: Socket[] = [];
    const started = Date.now();
    const slow = (head: string, drip: string) => {
      const sock = connect(port, '127.0.0.1');
      sockets.push(sock);
      sock.on('error', () => {});
      sock.on('close', () => closed.push(Date.now() - started));
      sock.on('connect', () => sock.write(head));
      const timer = setInterval(() => {
        if (!sock.destroyed) sock.write(drip);
      }, 200);
      sock.on('close', () => clearInterval(timer));
    };
    // 70 that never finish their headers, 70 bodies to a wrong secret, 60 bodies of a
    // posted task (the secret known) dripping a byte at a time.
    for (let i = 0; i < 70; i++) slow(`POST /${SECRET}/postback?id=${ID}&tag=t0 HTTP/1.1\r\nHost: x\r\n`, 'X-A: b\r\n');
    for (let i = 0; i < 70; i++)
      slow(`POST /wrong-secret-000000000/postback?id=${ID} HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n`, 'x');
    for (let i = 0; i < 60; i++)
      slow(
        `POST /${SECRET}/postback?id=${IDS[1]}&tag=t1 HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: 100000\r\n\r\n`,
        'x',
      );
    await new Promise((r) => setTimeout(r, 300));

    // Genuine callbacks of the other tasks, while the slow ones hold their connections.
    const answered = await Promise.all(
      IDS.slice(2).map(async (id, i) => {
        const t0 = Date.now();
        const r = await x.post(`/${SECRET}/postback?id=${id}&tag=t${i + 2}`, gz(envelope(task(id, 'genuine.example'))));
        return { status: r.status, ms: Date.now() - t0 };
      }),
    );
    expect(answered.every((a) => a.status === 200)).toBe(true);
    expect(Math.max(...answered.map((a) => a.ms))).toBeLessThan(10_000);
    expect(x.landed.map((l) => l.taskId).sort()).toEqual(IDS.slice(2).sort());

    // Every slow connection is closed by the server within its limits (plus the check interval).
    for (let i = 0; i < 100 && closed.length < 200; i++) await new Promise((r) => setTimeout(r, 100));
    expect(closed).toHaveLength(200);
    expect(Math.max(...closed)).toBeLessThan(6_000);
    expect(x.landed.some((l) => l.taskId === IDS[1])).toBe(false);
    expect((await x.rawText()).files.length).toBeGreaterThan(0);
    for (const s of sockets) s.destroy();
    // Still up.
    expect((await x.post(`/${SECRET}/postback?id=${IDS[1]}&tag=t1`, gz(envelope(task(IDS[1]!, 'genuine.example'))))).status).toBe(200);
  });

  it('caps the open connections: those over the cap are closed at once, and the server stays up', async () => {
    const x = await server({ maxConnections: 20 });
    const closed: number[] = [];
    const sockets = Array.from({ length: 40 }, () => {
      const sock = connect(x.s.port, '127.0.0.1');
      sock.on('error', () => {});
      sock.on('close', () => closed.push(1));
      return sock;
    });
    for (let i = 0; i < 50 && closed.length < 20; i++) await new Promise((r) => setTimeout(r, 50));
    expect(closed.length).toBe(20);
    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect((await x.post(`/${SECRET}/postback?id=${ID}&tag=t0`, gz(envelope(task(ID, 'genuine.example'))))).status).toBe(200);
  });
});
