import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { ServiceClient, type RawResponse } from '../../src/client/index.js';
import { maxResponseBytes } from '../../src/client/attempt.js';
import { EtlError } from '../../src/errors.js';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** A scripted server on loopback: answers the n-th request with `script(n)`. */
async function scripted(handler: Handler): Promise<{ url: string; hits: () => number; server: Server }> {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res, ++n));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => n, server };
}

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-svc-request-id': `r${Math.random()}`,
    'x-svc-charge-cny': '0.0000',
    ...headers,
  });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const ok = (tasks: unknown[]) => ({ status_code: 20000, status_message: 'Ok.', tasks_count: tasks.length, tasks_error: 0, tasks });
const task = { keyword: 'a', location_code: 2840, language_code: 'en' };

/** A client of the scripted server that waits for nothing between attempts, with `o` on top. */
function quickClient(url: string, o: Partial<ConstructorParameters<typeof ServiceClient>[0]>) {
  return new ServiceClient({ baseUrl: url, apiKey: 'svc_live_testtesttest', land: async () => {}, sleep: async () => {}, ...o });
}

describe('client retries never re-buy a charged result', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  /** A client whose backoff sleeps only advance a fake clock the limiter also reads. */
  function client(url: string, landed: RawResponse[], sleeps: number[] = []) {
    let t = 0;
    return new ServiceClient({
      baseUrl: url,
      apiKey: 'svc_live_testtesttest',
      land: async (raw) => void landed.push(raw),
      sleep: async (ms) => {
        sleeps.push(ms);
        t += ms;
      },
      limits: { now: () => t },
      random: () => 0.5,
    });
  }

  it('retries a free read after 503s with growing backoff, landing every response', async () => {
    const s = await scripted((_req, res, n) =>
      n < 3
        ? reply(res, 503, { status_code: 50000 })
        : reply(res, 200, ok([{ id: '0c0c0c0c-0000-4000-8000-00000000000c', status_code: 20000, result: [] }])),
    );
    server = s.server;
    const landed: RawResponse[] = [];
    const sleeps: number[] = [];
    const r = await client(s.url, landed, sleeps).call(endpoint('serp.engA.organic.tasks_ready'));
    expect(r.outcome.ok).toBe(true);
    expect(s.hits()).toBe(3);
    expect(landed.map((l) => l.httpStatus)).toEqual([503, 503, 200]);
    expect(sleeps).toHaveLength(2);
    expect(sleeps[1]!).toBeGreaterThan(sleeps[0]!);
  });

  it('honours Retry-After on a 429', async () => {
    const s = await scripted((_req, res, n) =>
      n === 1 ? reply(res, 429, { status_code: 40202 }, { 'retry-after': '7' }) : reply(res, 200, ok([])),
    );
    server = s.server;
    const sleeps: number[] = [];
    await client(s.url, [], sleeps).call(endpoint('serp.engA.organic.tasks_ready'));
    expect(sleeps).toEqual([7000]);
  });

  it('sends a charged task_post once when the answer is a 5xx, and says the outcome is unknown', async () => {
    const s = await scripted((_req, res) => reply(res, 502, 'bad gateway'));
    server = s.server;
    const landed: RawResponse[] = [];
    const err = await client(s.url, landed)
      .call(endpoint('serp.engA.organic.task_post'), { tasks: [task] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(EtlError);
    expect((err as EtlError).code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(s.hits()).toBe(1);
    expect(landed).toHaveLength(1);
    expect(landed[0]!.body).toBe('bad gateway');
  });

  it('sends a charged task_post once when the connection drops mid-call', async () => {
    const s = await scripted((req) => req.socket.destroy());
    server = s.server;
    const err = await client(s.url, [])
      .call(endpoint('serp.engA.organic.task_post'), { tasks: [task] })
      .catch((e) => e);
    expect((err as EtlError).code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(s.hits()).toBe(1);
  });

  it('repeats a task_post refused with 429, since a refusal created nothing', async () => {
    const s = await scripted((_req, res, n) =>
      n === 1
        ? reply(res, 429, { status_code: 40202 }, { 'retry-after': '0' })
        : reply(res, 200, ok([{ id: '0d0d0d0d-0000-4000-8000-00000000000d', status_code: 20100, result: null }])),
    );
    server = s.server;
    const r = await client(s.url, []).call(endpoint('serp.engA.organic.task_post'), { tasks: [task] });
    expect(s.hits()).toBe(2);
    expect(r.outcome.tasks[0]!.statusCode).toBe(20100);
  });

  it('refuses an invalid task before sending, naming the task, field and rule', async () => {
    const s = await scripted((_req, res) => reply(res, 200, ok([])));
    server = s.server;
    const err = await client(s.url, [])
      .call(endpoint('serp.engA.organic.task_post'), { tasks: [task, { ...task, depth: 701 }, { keyword: 'b' }] })
      .catch((e) => e);
    expect((err as EtlError).code).toBe('ETL_REQUEST_INVALID');
    expect((err as Error).message).toContain('task 1: depth: at most 700');
    expect((err as Error).message).toContain(
      'task 2: location_code: one of location_code, location_name or location_coordinate is required',
    );
    expect(s.hits()).toBe(0);
  });

  it('reports a lost charged task_post with its tags and the request id it sent, so the tasks can be looked up', async () => {
    const seenIds: string[] = [];
    const s = await scripted((req) => {
      seenIds.push(String(req.headers['x-svc-request-id']));
      req.socket.destroy();
    });
    server = s.server;
    const tasks = [
      { ...task, tag: 'run1-a' },
      { ...task, keyword: 'b', tag: 'run1-b' },
    ];
    const err = (await client(s.url, [])
      .call(endpoint('serp.engA.organic.task_post'), { tasks })
      .catch((e) => e)) as EtlError;
    expect(err.code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(err.context.tags).toEqual(['run1-a', 'run1-b']);
    expect(err.context.clientRequestIds).toEqual(seenIds);
    expect(err.message).toContain(seenIds[0]!);
    expect(err.message).toMatch(/run1-a, run1-b/);
    expect(err.message).not.toContain('testtesttest');
    expect(s.hits()).toBe(1);
  });

  it('returns per-task outcomes for a mixed batch instead of throwing', async () => {
    const s = await scripted((_req, res) =>
      reply(
        res,
        200,
        {
          ...ok([
            { id: '0a0a0a0a-0000-4000-8000-00000000000a', status_code: 20100, result: null },
            { id: '0b0b0b0b-0000-4000-8000-00000000000b', status_code: 40501, status_message: 'Invalid Field', result: null },
          ]),
          tasks_error: 1,
        },
        { 'x-svc-charge-cny': '0.0120' },
      ),
    );
    server = s.server;
    const r = await client(s.url, []).call(endpoint('serp.engA.organic.task_post'), { tasks: [task, { ...task, keyword: 'b' }] });
    expect(r.outcome.ok).toBe(false);
    expect(r.outcome.failedTasks).toBe(1);
    expect(r.outcome.tasks.map((t) => [t.id, t.ok, t.statusCode])).toEqual([
      ['0a0a0a0a-0000-4000-8000-00000000000a', true, 20100],
      ['0b0b0b0b-0000-4000-8000-00000000000b', false, 40501],
    ]);
    expect(r.charge.chargeCny).toBe('0.0120');
  });

  it('gives up on a free read after maxAttempts 5xx answers, landing each of them', async () => {
    const s = await scripted((_req, res) => reply(res, 503, { status_code: 50000, status_message: 'down' }));
    server = s.server;
    const landed: RawResponse[] = [];
    const err = (await client(s.url, landed)
      .call(endpoint('serp.engA.organic.tasks_ready'))
      .catch((e) => e)) as EtlError;
    expect(err.code).toBe('ETL_SERVICE_UNAVAILABLE');
    expect(s.hits()).toBe(5);
    expect(landed).toHaveLength(5);
  });

  it('caps the backoff and never sleeps less than Retry-After', async () => {
    const s = await scripted((_req, res, n) =>
      n < 5 ? reply(res, 429, { status_code: 40202 }, n === 4 ? { 'retry-after': '90' } : {}) : reply(res, 200, ok([])),
    );
    server = s.server;
    const sleeps: number[] = [];
    const c = new ServiceClient({
      baseUrl: s.url,
      apiKey: 'svc_live_testtesttest',
      land: async () => {},
      sleep: async (ms) => void sleeps.push(ms),
      random: () => 1,
      backoffMs: 500,
      maxBackoffMs: 1500,
      limits: { now: () => 0, adaptive: false },
    });
    await c.call(endpoint('serp.engA.organic.tasks_ready'));
    expect(sleeps).toEqual([500, 1000, 1500, 90_000]);
  });

  it('checks clock-dependent rules and callback support before sending', async () => {
    const s = await scripted((_req, res) => reply(res, 200, ok([])));
    server = s.server;
    const now = new Date('2026-11-21T00:00:00Z');
    const c = new ServiceClient({ baseUrl: s.url, apiKey: 'svc_live_testtesttest', land: async () => {}, now: () => now });
    const errs = await c.call(endpoint('serp.errors'), { tasks: [{ datetime_from: '2026-11-10 00-00-00 +00:00' }] }).catch((e) => e);
    expect((errs as Error).message).toContain('task 0: datetime_from: not earlier than 7 days ago');
    const live = await c
      .call(endpoint('serp.engA.organic.live.advanced'), { tasks: [{ ...task, pingback_url: 'https://cb.example/?id=$id' }] })
      .catch((e) => e);
    expect((live as Error).message).toContain('task 0: pingback_url: /v3/serp/engA/organic/live/advanced has no callback support');
    const many = await c
      .call(endpoint('appendix.webhook_resend'), {
        tasks: Array.from({ length: 101 }, () => ({ id: '01234567-89ab-4cde-8f01-23456789abcd' })),
      })
      .catch((e) => e);
    expect((many as Error).message).toContain('101 tasks in one POST; /v3/appendix/webhook_resend takes at most 100');
    expect(s.hits()).toBe(0);
  });

  it('asks for the .ai variant and reads its slimmer body with the same success rule', async () => {
    const s = await scripted((_req, res) =>
      reply(res, 200, { id: '01234567-89ab-4cde-8f01-23456789abcd', status_code: 20000, status_message: 'Ok.', items: [{ keyword: 'a' }] }),
    );
    server = s.server;
    const seen: string[] = [];
    s.server.on('request', (req) => seen.push(req.url ?? ''));
    const r = await client(s.url, []).call(endpoint('svc_labs.engA.ranked_keywords.live'), {
      tasks: [{ target: 'example.com' }],
      ai: true,
    });
    expect(seen).toEqual(['/v3/svc_labs/engA/ranked_keywords/live.ai']);
    expect(r.outcome.ok).toBe(true);
    expect((r.envelope as { items?: unknown[] }).items).toHaveLength(1);
  });

  it('a charged live call that times out is sent once and reported as outcome unknown; a free read that times out is retried', async () => {
    const held: ServerResponse[] = [];
    const s = await scripted((_req, res) => void held.push(res)); // never answers
    server = s.server;
    const c = quickClient(s.url, { timeoutMs: 150, maxAttempts: 3 });
    const err = (await c
      .call(endpoint('serp.engA.organic.live.advanced'), { tasks: [{ ...task, tag: 'live-1' }] })
      .catch((e) => e)) as EtlError;
    expect(err.code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(err.message).toMatch(/Timeout/i);
    expect(err.context.tags).toEqual(['live-1']);
    expect(s.hits()).toBe(1);
    const read = (await c.call(endpoint('serp.engA.organic.tasks_ready')).catch((e) => e)) as EtlError;
    expect(read.code).toBe('ETL_TIMEOUT');
    expect(s.hits()).toBe(4);
    for (const r of held) r.destroy();
  });

  /** Answers every request with a body that never ends: 1 MiB at a time while the socket takes it. */
  function endless(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json', 'x-svc-charge-cny': '0.0142' });
    res.write('{"version":"0.1","status_code":20000,"tasks":[{"x":"');
    const mb = Buffer.alloc(1 << 20, 0x61);
    const pump = () => {
      while (!res.destroyed && res.write(mb));
      if (!res.destroyed) res.once('drain', pump);
    };
    res.on('error', () => {});
    pump();
  }

  it('cuts an answer past maxResponseBytes: a free read is tried again and gives up, a charged live call is sent once, outcome unknown', async () => {
    const s = await scripted((_req, res) => endless(res));
    server = s.server;
    const landed: RawResponse[] = [];
    const c = quickClient(s.url, { land: async (raw) => void landed.push(raw), maxAttempts: 3, maxResponseBytes: 4 << 20 });
    const rss0 = process.memoryUsage().rss;
    const read = (await c.call(endpoint('serp.engA.organic.tasks_ready')).catch((e) => e)) as EtlError;
    expect(read.code).toBe('ETL_TIMEOUT');
    expect(read.message).toMatch(/passed 4 MB and was cut there \(PIPELINE_MAX_RESPONSE_MB/);
    expect(s.hits()).toBe(3);
    const live = (await c
      .call(endpoint('serp.engA.organic.live.advanced'), { tasks: [{ ...task, tag: 'live-1' }] })
      .catch((e) => e)) as EtlError;
    expect(live.code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(live.context.tags).toEqual(['live-1']);
    expect(s.hits()).toBe(4);
    // Nothing of a cut answer is landed or parsed: it is no answer.
    expect(landed).toEqual([]);
    expect(process.memoryUsage().rss - rss0).toBeLessThan(256 << 20);
  });

  it('cuts an answer that keeps trickling past five call timeouts in all', async () => {
    const timers: NodeJS.Timeout[] = [];
    const s = await scripted((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status_code":20000,"tasks":[');
      // A byte every 20 ms: never a pause as long as the timeout (100 ms), never an end.
      timers.push(setInterval(() => res.destroyed || res.write(' '), 20));
      res.on('error', () => {});
    });
    server = s.server;
    const c = quickClient(s.url, { timeoutMs: 100, maxAttempts: 2 });
    const t0 = Date.now();
    const err = (await c.call(endpoint('serp.engA.organic.tasks_ready')).catch((e) => e)) as EtlError;
    for (const t of timers) clearInterval(t);
    expect(err.code).toBe('ETL_TIMEOUT');
    expect(err.message).toMatch(/not whole after 0.5 s, 5 times the call timeout/);
    expect(s.hits()).toBe(2);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('reads PIPELINE_MAX_RESPONSE_MB, and ignores a value that is no positive number', () => {
    expect(maxResponseBytes({})).toBe(256 * 2 ** 20);
    expect(maxResponseBytes({ PIPELINE_MAX_RESPONSE_MB: '1024' })).toBe(1024 * 2 ** 20);
    expect(maxResponseBytes({ PIPELINE_MAX_RESPONSE_MB: '0' })).toBe(256 * 2 ** 20);
    expect(maxResponseBytes({ PIPELINE_MAX_RESPONSE_MB: 'lots' })).toBe(256 * 2 ** 20);
  });
});
