import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { ServiceClient, type RawResponse } from '../../src/client/index.js';
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
  res.writeHead(status, { 'content-type': 'application/json', 'x-svc-request-id': `r${Math.random()}`, 'x-svc-charge-cny': '0.0000', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

const ok = (tasks: unknown[]) => ({ status_code: 20000, status_message: 'Ok.', tasks_count: tasks.length, tasks_error: 0, tasks });
const task = { keyword: 'a', location_code: 2840, language_code: 'en' };

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
    const s = await scripted((_req, res, n) => (n < 3 ? reply(res, 503, { status_code: 50000 }) : reply(res, 200, ok([{ id: 'x', status_code: 20000, result: [] }]))));
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
    const s = await scripted((_req, res, n) => (n === 1 ? reply(res, 429, { status_code: 40202 }, { 'retry-after': '7' }) : reply(res, 200, ok([]))));
    server = s.server;
    const sleeps: number[] = [];
    await client(s.url, [], sleeps).call(endpoint('serp.engA.organic.tasks_ready'));
    expect(sleeps).toEqual([7000]);
  });

  it('sends a charged task_post once when the answer is a 5xx, and says the outcome is unknown', async () => {
    const s = await scripted((_req, res) => reply(res, 502, 'bad gateway'));
    server = s.server;
    const landed: RawResponse[] = [];
    const err = await client(s.url, landed).call(endpoint('serp.engA.organic.task_post'), { tasks: [task] }).catch((e) => e);
    expect(err).toBeInstanceOf(EtlError);
    expect((err as EtlError).code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(s.hits()).toBe(1);
    expect(landed).toHaveLength(1);
    expect(landed[0]!.body).toBe('bad gateway');
  });

  it('sends a charged task_post once when the connection drops mid-call', async () => {
    const s = await scripted((req) => req.socket.destroy());
    server = s.server;
    const err = await client(s.url, []).call(endpoint('serp.engA.organic.task_post'), { tasks: [task] }).catch((e) => e);
    expect((err as EtlError).code).toBe('ETL_OUTCOME_UNKNOWN');
    expect(s.hits()).toBe(1);
  });

  it('repeats a task_post refused with 429, since a refusal created nothing', async () => {
    const s = await scripted((_req, res, n) =>
      n === 1 ? reply(res, 429, { status_code: 40202 }, { 'retry-after': '0' }) : reply(res, 200, ok([{ id: 't', status_code: 20100, result: null }])),
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
    expect((err as Error).message).toContain('task 2: location_code: one of location_code, location_name or location_coordinate is required');
    expect(s.hits()).toBe(0);
  });
});
