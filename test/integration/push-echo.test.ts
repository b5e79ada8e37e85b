import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { pushWorld } from './push-helpers.js';

// The callback URL (secret, task id, tag) shows in a proxy's access log; what was bought does
// not. Someone who read the log posts a result for one of our tasks before the service does:
// its body, whose data does not echo the task's keyword, is refused, and the genuine postback
// (whose data echoes keywords in odd Unicode, case and escapes) lands.

const KEYWORDS = ['Café Crème', 'Cafe\u0301 noir', '100%25 cotton', 'C++ Tips', 'ＦＵＬＬ width', 'naïve 😀 emoji'];

/** A proxy in front of the emulator that logs the task_post requests and answers going through it. */
async function loggingProxy(
  target: string,
): Promise<{ url: string; posts: { sent: any; answer: any }[]; onPost: (fn: () => void) => void; close: () => Promise<void> }> {
  const posts: { sent: any; answer: any }[] = [];
  let notify = () => {};
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const headers = { ...req.headers };
    delete headers.host;
    delete headers['content-length'];
    const r = await request(`${target}${req.url}`, { method: req.method as 'GET', headers, body: body.length > 0 ? body : null });
    const answer = Buffer.from(await r.body.arrayBuffer());
    const out = Object.fromEntries(
      Object.entries(r.headers).filter(([k]) => !['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)),
    );
    res.writeHead(r.statusCode, out);
    res.end(answer);
    if (req.url?.endsWith('/task_post')) {
      posts.push({ sent: JSON.parse(body.toString('utf8')), answer: JSON.parse(answer.toString('utf8')) });
      notify();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    onPost: (fn) => (notify = fn),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe("a postback whose data does not echo the task's keyword", () => {
  it('is refused (400) and lands nothing; the genuine postbacks land, odd keywords included, and nothing is fetched', async () => {
    const w = await pushWorld({ readyAfterMs: 1500 });
    const proxy = await loggingProxy(w.sb.url);
    try {
      const yaml = `name: echo\ncollection:\n  mode: push\n  listen: "127.0.0.1:0"\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: ${JSON.stringify(KEYWORDS)}\n`;
      const forged: Promise<{ status: number; text: string }>[] = [];
      proxy.onPost(() => {
        // What an access log shows: the postback URL as sent, and the ids the service gave.
        const { sent, answer } = proxy.posts.at(-1)!;
        const url = String(sent[0].postback_url).replace('$id', answer.tasks[0].id).replace('$tag', sent[0].tag);
        const body = {
          version: '0.1',
          status_code: 20000,
          status_message: 'Ok.',
          tasks_count: 1,
          tasks: [
            {
              id: answer.tasks[0].id,
              status_code: 20000,
              status_message: 'Ok.',
              cost: 0,
              data: { api: 'serp', function: 'task_get', tag: sent[0].tag, keyword: 'guessed keyword', location_code: 2840 },
              result: [
                {
                  keyword: 'guessed keyword',
                  type: 'organic',
                  items_count: 1,
                  items: [{ type: 'organic', rank_group: 1, rank_absolute: 1, domain: 'forged.example', url: 'https://forged.example/' }],
                },
              ],
            },
          ],
        };
        forged.push(
          request(url, { method: 'POST', body: gzipSync(JSON.stringify(body)), headers: { 'content-encoding': 'gzip' } }).then(
            async (r) => ({
              status: r.statusCode,
              text: await r.body.text(),
            }),
          ),
        );
      });
      const summary = await w.run(parsePipeline(yaml, 'echo.yaml', {}), { baseUrl: proxy.url });
      expect(summary.state).toBe('completed');
      expect(forged.length).toBeGreaterThan(0);
      for (const f of await Promise.all(forged)) {
        expect(f.status).toBe(400);
        expect(f.text).toBe(
          "body is not the answer to the task posted: its task's data does not echo what was posted (keyword, location_code, language_code, device, tag)",
        );
      }
      // Every genuine postback landed: no task was fetched with task_get.
      expect(w.calls('/task_get/')).toBe(0);
      expect((await w.stats()).callbacks.delivered).toBe(KEYWORDS.length);
      const rows = await w.db((wh) =>
        wh.all<{ domains: number }>(`SELECT count(*) FILTER (WHERE domain = 'forged.example')::INT AS domains FROM serp_items`),
      );
      expect(rows).toEqual([{ domains: 0 }]);
      const kws = await w.db((wh) => wh.all<{ n: number }>(`SELECT count(DISTINCT task_id)::INT AS n FROM serp_results`));
      expect(kws).toEqual([{ n: KEYWORDS.length }]);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
