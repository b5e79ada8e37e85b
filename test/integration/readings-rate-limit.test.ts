import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/client/index.js';
import { endpoint } from '../../src/catalog/index.js';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type AdminStatsBody, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, sumDecimals, tempDir, warmReferenceLists } from './helpers.js';

const KEY = 'svc_live_testreadingsclient';
const pipeline = parsePipeline(
  `name: rclient\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [alpha, beta, gamma, delta]\n`,
  'rclient.yaml',
  {},
);

async function stats(sb: SandboxHandle): Promise<AdminStatsBody> {
  return (await (await request(`${sb.url}/__admin/stats`)).body.json()) as AdminStatsBody;
}

/** Response headers worth passing on from the emulator (the charge headers, Date, Retry-After). */
function passOn(h: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (/^(x-svc-|date$|retry-after)/i.test(k) && typeof v === 'string') out[k] = v;
  return out;
}

describe('the client under every reading of a rate-limit refusal (issue 44, item 3)', () => {
  let sandbox: SandboxHandle | undefined;
  let proxy: Server | undefined;
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
    await sandbox?.close();
    await tmp?.cleanup();
    proxy = sandbox = tmp = undefined;
  });

  /**
   * A service that refuses part of a POST: the first task_post is passed on with only its even
   * tasks, and the answer carries the others echoed at task status 40202 in their places (HTTP
   * 200, top-level 20000, `Retry-After`), as a service counting tasks against its rate limit could
   * answer. Everything else is passed on as it is.
   */
  async function partialRefuser(target: string): Promise<{ url: string; posts: string[][] }> {
    const posts: string[][] = [];
    proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const isPost = req.method === 'POST' && req.url!.endsWith('/task_post');
      const sent = isPost ? (JSON.parse(body!.toString()) as { tag: string }[]) : [];
      const split = isPost && posts.length === 0 && sent.length > 1;
      const forward = split ? sent.filter((_, i) => i % 2 === 0) : sent;
      if (isPost) posts.push(forward.map((t) => t.tag));
      const up = await request(target + req.url, {
        method: req.method as 'GET' | 'POST',
        headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
        body: isPost ? JSON.stringify(forward) : body,
      });
      const text = await up.body.text();
      if (!split) {
        res.writeHead(up.statusCode, { 'content-type': 'application/json', ...passOn(up.headers) });
        res.end(text);
        return;
      }
      const env = JSON.parse(text) as { tasks: unknown[]; tasks_error: number; tasks_count: number };
      const taken = [...env.tasks];
      env.tasks = sent.map((t, i) =>
        i % 2 === 0
          ? taken.shift()
          : {
              id: randomUUID(),
              status_code: 40202,
              status_message: 'Rate Limit Per Minute Exceeded.',
              cost: 0,
              result_count: 0,
              data: t,
              result: null,
            },
      );
      env.tasks_count = sent.length;
      env.tasks_error = sent.length - forward.length;
      res.writeHead(200, { 'content-type': 'application/json', ...passOn(up.headers), 'retry-after': '0.05' });
      res.end(JSON.stringify(env));
    });
    await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(proxy!.address() as AddressInfo).port}`, posts };
  }

  it('HTTP 200 with some tasks at 40202: those are posted again alone after the wait; the others are kept, none bought twice or failed', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0, admin: true });
    tmp = await tempDir('pipeline-rclient-');
    await warmReferenceLists(tmp.dir, pipeline, 'rclient.yaml', () => new Date());
    const { url, posts } = await partialRefuser(sandbox.url);
    const summary = await runPipeline({
      pipeline,
      file: 'rclient.yaml',
      warehouseDir: tmp.dir,
      baseUrl: url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
      collectTimeoutMs: 20_000,
    });
    expect(summary.state).toBe('completed');
    expect(summary.tasks).toMatchObject({ collected: 4, failed: 0 });
    // The first POST's refused half, and only it, went again.
    expect(posts.map((p) => p.length)).toEqual([2, 2]);
    expect(new Set([...posts[0]!, ...posts[1]!]).size).toBe(4);
    const s = await stats(sandbox);
    expect(Object.values(s.tasks_created_by_tag)).toEqual([1, 1, 1, 1]);
    await withWarehouse(tmp.dir, async (wh) => {
      // Each task names the POST that created it: the re-posted ones the second POST.
      const byCall = await wh.all<{ tags: string[]; n: number }>(
        `SELECT list_sort(list(t.tag)) AS tags, count(*)::INT AS n FROM tasks AS t JOIN ledger AS l ON l.call_id = t.post_call_id
         WHERE l.path LIKE '%/task_post' GROUP BY t.post_call_id ORDER BY min(l.called_at)`,
      );
      expect(byCall.map((r) => r.tags)).toEqual([[...posts[0]!].sort(), [...posts[1]!].sort()]);
      const [l] = await wh.all<{ gross: string }>(`SELECT sum(charge_cny)::VARCHAR AS gross FROM ledger WHERE task_id IS NULL`);
      expect(l!.gross).toBe(sumDecimals(sandbox!.log.map((e) => e.chargeCny)));
    });
  });

  it('a task still refused with 40202 after every attempt is left unsent, not failed: the run ends partial and the next posts it once', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0, admin: true });
    tmp = await tempDir('pipeline-rclient-');
    await warmReferenceLists(tmp.dir, pipeline, 'rclient.yaml', () => new Date());
    // A service that refuses the task of one keyword (40202) in every POST, and takes the others.
    const refusedKeyword = 'gamma';
    proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const isPost = req.method === 'POST' && req.url!.endsWith('/task_post');
      const sent = isPost ? (JSON.parse(body!.toString()) as { keyword: string }[]) : [];
      const forward = sent.filter((t) => t.keyword !== refusedKeyword);
      const up = await request(sandbox!.url + req.url, {
        method: req.method as 'GET' | 'POST',
        headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
        body: !isPost ? body : JSON.stringify(forward.length ? forward : sent.slice(0, 0)),
      });
      const text = await up.body.text();
      if (!isPost || forward.length === sent.length) {
        res.writeHead(up.statusCode, { 'content-type': 'application/json', ...passOn(up.headers) });
        res.end(text);
        return;
      }
      const taken = forward.length ? [...(JSON.parse(text) as { tasks: unknown[] }).tasks] : [];
      const tasks = sent.map((t) =>
        t.keyword === refusedKeyword
          ? {
              id: randomUUID(),
              status_code: 40202,
              status_message: 'Rate Limit Per Minute Exceeded.',
              cost: 0,
              result_count: 0,
              data: t,
              result: null,
            }
          : taken.shift(),
      );
      res.writeHead(200, { 'content-type': 'application/json', ...passOn(forward.length ? up.headers : {}), 'retry-after': '0.01' });
      res.end(
        JSON.stringify({
          version: '0.1',
          status_code: 20000,
          status_message: 'Ok.',
          cost: 0,
          tasks_count: tasks.length,
          tasks_error: sent.length - forward.length,
          tasks,
        }),
      );
    });
    await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const opts = {
      pipeline,
      file: 'rclient.yaml',
      warehouseDir: tmp.dir,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
      collectTimeoutMs: 20_000,
    };
    const first = await runPipeline({ ...opts, baseUrl: url });
    expect(first.state).toBe('partial');
    expect(first.tasks).toMatchObject({ collected: 3, failed: 0 });
    const [row] = await withWarehouse(tmp.dir, (wh) =>
      wh.all<{ state: string; status_code: number }>(`SELECT state, status_code FROM tasks WHERE spec->>'keyword' = $1`, [refusedKeyword]),
    );
    expect(row).toEqual({ state: 'unsent', status_code: 40202 });
    const second = await runPipeline({ ...opts, baseUrl: sandbox.url });
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ collected: 4, failed: 0 });
    expect(Object.values((await stats(sandbox)).tasks_created_by_tag)).toEqual([1, 1, 1, 1]);
  });

  it('HTTP 200 with every task at 40202 (the http200 reading): the POST or GET is sent again whole after the wait, nothing failed', async () => {
    sandbox = await startSandbox({
      readyAfterMs: 0,
      admin: true,
      readings: { rateLimitBody: 'http200' },
      rateLimits: { serp_keywords_domain: 1 },
      timeScale: 600,
    });
    const client = new ServiceClient({ baseUrl: sandbox.url, apiKey: KEY, land: async () => {} });
    const post = endpoint('serp.engA.organic.task_post');
    const task = (k: string) => ({ keyword: k, location_code: 2840, language_code: 'en', tag: k });
    const a = await client.call(post, { tasks: [task('one')] });
    const b = await client.call(post, { tasks: [task('two'), task('three')] }); // refused at once: the window holds one call
    expect(a.outcome.ok).toBe(true);
    expect(b.outcome.ok).toBe(true);
    expect(b.outcome.tasks.map((t) => t.statusCode)).toEqual([20100, 20100]);
    expect(Object.values((await stats(sandbox)).tasks_created_by_tag)).toEqual([1, 1, 1]);
    expect(sandbox.log.filter((e) => e.path.endsWith('/task_post')).length).toBeGreaterThan(2); // a refusal came and was waited out
    // A GET refused so (one task echoed at 40202) is a refusal too: waited out, then answered.
    const ready = endpoint('serp.engA.organic.tasks_ready');
    const first = await client.call(ready);
    const again = await client.call(ready);
    expect([first.outcome.ok, again.outcome.ok]).toEqual([true, true]);
    expect(again.outcome.tasks.map((t) => t.statusCode)).toEqual([20000]);
  });
});
