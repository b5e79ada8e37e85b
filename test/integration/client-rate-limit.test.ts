import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { ServiceClient } from '../../src/client/index.js';

const WINDOW_MS = 1000;

/**
 * A loopback server that enforces `limit` accepted requests in any sliding window of
 * WINDOW_MS (as the time-scaled emulator does) and answers the rest with 429.
 */
async function windowServer(limit: number) {
  const accepted: number[] = [];
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const t = performance.now();
    req.resume();
    const inWindow = accepted.filter((a) => a > t - WINDOW_MS).length;
    if (inWindow >= limit) {
      refused++;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0.2' });
      res.end(JSON.stringify({ status_code: 40202, status_message: 'Rate limit per minute exceeded.' }));
      return;
    }
    accepted.push(t);
    res.writeHead(200, { 'content-type': 'application/json', 'x-svc-charge-cny': '0', 'x-svc-request-id': `r${accepted.length}` });
    res.end(
      JSON.stringify({
        status_code: 20000,
        status_message: 'Ok.',
        tasks_count: 1,
        tasks_error: 0,
        tasks: [{ id: '0c0c0c0c-0000-4000-8000-00000000000c', status_code: 20000, result: [] }],
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  /** The most requests the server accepted in any sliding window. */
  const maxInAnyWindow = () => Math.max(0, ...accepted.map((a, i) => accepted.slice(i).filter((b) => b < a + WINDOW_MS).length));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, accepted, refused: () => refused, maxInAnyWindow };
}

describe('rate limiter against a loopback server counting a sliding window', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  it('never exceeds the limit in any sliding window and gets no 429, across several windows', async () => {
    const s = await windowServer(10);
    server = s.server;
    const client = new ServiceClient({
      baseUrl: s.url,
      apiKey: 'svc_sandbox_limits',
      land: async () => {},
      limits: { windowMs: WINDOW_MS, perMinute: { serp_keywords_domain: 10 }, concurrency: 4 },
    });
    const ready = endpoint('serp.engA.organic.tasks_ready');
    const results = await Promise.all(Array.from({ length: 35 }, () => client.call(ready)));
    expect(results.every((r) => r.outcome.ok)).toBe(true);
    expect(s.refused()).toBe(0);
    expect(s.accepted).toHaveLength(35);
    expect(s.maxInAnyWindow()).toBeLessThanOrEqual(10);
    // Each window is used, not left idle: the 35 calls span three full windows and a bit.
    const span = s.accepted.at(-1)! - s.accepted[0]!;
    expect(span).toBeGreaterThanOrEqual(3 * WINDOW_MS);
  });

  it('counts families apart: a full SERP window does not hold back a call of another family', async () => {
    const s = await windowServer(100);
    server = s.server;
    const client = new ServiceClient({
      baseUrl: s.url,
      apiKey: 'svc_sandbox_limits',
      land: async () => {},
      limits: { windowMs: WINDOW_MS, perMinute: { serp_keywords_domain: 2 } },
    });
    const ready = endpoint('serp.engA.organic.tasks_ready');
    const serp = Promise.all([client.call(ready), client.call(ready), client.call(ready)]);
    const t0 = performance.now();
    await client.call(endpoint('business_data.engA.hotel_info.tasks_ready'));
    const otherFamilyWait = performance.now() - t0;
    await serp;
    expect(otherFamilyWait).toBeLessThan(WINDOW_MS / 2);
    expect(s.accepted).toHaveLength(4);
  });

  it('adapts when the server allows fewer calls than configured: fewer 429s than a fixed limit, every call landed', async () => {
    async function run(adaptive: boolean) {
      const s = await windowServer(5);
      const client = new ServiceClient({
        baseUrl: s.url,
        apiKey: 'svc_sandbox_limits',
        land: async () => {},
        maxAttempts: 30,
        backoffMs: 50,
        maxBackoffMs: 200,
        limits: { windowMs: WINDOW_MS, perMinute: { serp_keywords_domain: 10 }, concurrency: 10, adaptive },
      });
      const ready = endpoint('serp.engA.organic.tasks_ready');
      const results = await Promise.all(Array.from({ length: 20 }, () => client.call(ready)));
      await new Promise<void>((r) => s.server.close(() => r()));
      return { ok: results.every((r) => r.outcome.ok), accepted: s.accepted.length, refused: s.refused(), max: s.maxInAnyWindow() };
    }
    const fixed = await run(false);
    const adaptive = await run(true);
    expect(adaptive.ok && fixed.ok).toBe(true);
    expect(adaptive.accepted).toBe(20);
    expect(fixed.refused).toBeGreaterThan(0);
    expect(adaptive.refused).toBeLessThan(fixed.refused);
  });
});
