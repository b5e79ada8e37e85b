// The later cases of run-resume.test.ts, split off so vitest runs the two halves in parallel (issue 45).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline, type Pipeline } from '../../src/config/index.js';
import { runPipeline, type RunOptions } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir, warmReferenceLists } from './helpers.js';

const pipeline: Pipeline = parsePipeline(
  `name: resume
jobs:
  - kind: serp
    depth: 10
    locations: [2840]
    keywords: [alpha, beta, gamma, delta, epsilon]
`,
  'resume.yaml',
  {},
);

/** A clock the test moves by hand; the emulator and the run share it. */
function handClock(startIso = '2026-11-20T09:00:00Z') {
  let t = Date.parse(startIso);
  return { now: () => new Date(t), advance: (ms: number) => void (t += ms) };
}

/** Sends a request a proxy received on to `target` (the emulator), with its body; the answer's status and text. */
async function forward(target: string, req: IncomingMessage, body: Buffer[]): Promise<{ status: number; text: string }> {
  const upstream = await request(target + req.url, {
    method: req.method as 'GET' | 'POST',
    headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
    body: body.length ? Buffer.concat(body) : undefined,
  });
  return { status: upstream.statusCode, text: await upstream.body.text() };
}

describe('a second run finishes an unfinished one and never pays twice', () => {
  let wh: { dir: string; cleanup: () => Promise<void> };
  let sandbox: SandboxHandle | undefined;
  let server: Server | undefined;
  const clock = handClock();

  beforeEach(async () => {
    wh = await tempDir('pipeline-resume-');
    // The SERP places were checked by an earlier night: the faults below hit the run's own calls.
    await warmReferenceLists(wh.dir, pipeline, 'resume.yaml', clock.now);
  });
  afterEach(async () => {
    await sandbox?.close();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    sandbox = undefined;
    server = undefined;
    await wh.cleanup();
  });

  const base = (url: string, extra: Partial<RunOptions> = {}): RunOptions => ({
    pipeline,
    file: 'resume.yaml',
    warehouseDir: wh.dir,
    baseUrl: url,
    apiKey: 'svc_live_testresumetest',
    logger: silentLogger,
    pollIntervalMs: 1,
    collectTimeoutMs: 0,
    now: clock.now,
    sleep: async () => {},
    ...extra,
  });

  /** A proxy (the test's `server`) that forwards each request to `target` (the emulator), then drops the answer on the floor. */
  async function answerDropper(target: string): Promise<string> {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      await forward(target, req, chunks);
      res.socket?.destroy();
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async function runsAndTasks() {
    return withWarehouse(wh.dir, async (db) => ({
      runs: await db.all<{ run_id: string; state: string }>(`SELECT run_id, state FROM runs ORDER BY started_at`),
      tasks: await db.all<{ state: string; n: number }>(`SELECT state, count(*)::INT AS n FROM tasks GROUP BY state ORDER BY state`),
    }));
  }

  it('posts tasks of unknown outcome that the service says it never created', async () => {
    let hits = 0;
    server = createServer((req) => {
      hits++;
      req.socket.destroy(); // the request arrived somewhere else; the emulator never saw it
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const first = await runPipeline(base(url));
    expect(hits).toBe(1);
    expect(first.stopKind).toBe('unknown');

    sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const second = await runPipeline(base(sandbox.url, { collectTimeoutMs: 10_000 }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ planned: 5, posted: 5, collected: 5 });
    expect(sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
  });

  it('stops before posting when aborted, and a later run posts everything once', async () => {
    sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const stop = new AbortController();
    stop.abort();
    const first = await runPipeline(base(sandbox.url, { signal: stop.signal }));
    expect(first.state).toBe('partial');
    expect(first.stopKind).toBe('interrupted');
    expect(sandbox.log).toHaveLength(0);
    const second = await runPipeline(base(sandbox.url, { collectTimeoutMs: 10_000 }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(sandbox.log.filter((l) => l.method === 'POST')).toHaveLength(1);
  });

  it('starts a fresh run with newRun even when the last one is unfinished', async () => {
    sandbox = await startSandbox({ now: clock.now, readyAfterMs: 60_000 });
    const first = await runPipeline(base(sandbox.url));
    const second = await runPipeline(base(sandbox.url, { newRun: true }));
    expect(second.runId).not.toBe(first.runId);
    expect(sandbox.log.filter((l) => l.method === 'POST')).toHaveLength(2);
  });

  it('collects a task fetched but never loaded, though it has left the ready list', async () => {
    sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const target = sandbox.url;
    let gets = 0;
    // Forwards everything; the 2nd task fetched reaches the emulator (and leaves its ready
    // list) but its answer is replaced by a 503, every time the client retries it.
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const upstream = await forward(target, req, chunks);
      if (req.url?.includes('/task_get/') && ++gets >= 2) {
        res.writeHead(503, { 'content-type': 'application/json' });
        return res.end('{"status_code":50000}');
      }
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(upstream.text);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const proxy = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const first = await runPipeline(base(proxy, { collectTimeoutMs: 10_000 }));
    expect(first.state).toBe('partial');
    expect(first.tasks.collected).toBe(1);

    const second = await runPipeline(base(sandbox.url, { collectTimeoutMs: 10_000 }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ posted: 5, collected: 5, pending: 0 });
    expect(sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
  });

  it('fetches the other tasks past one whose task_get keeps failing, and the next run fetches that one', async () => {
    sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const target = sandbox.url;
    let poisoned: string | undefined;
    let poisonedCalls = 0;
    // The first task fetched is answered 503 every time (the service fails to build that one
    // result), at once; every other call is forwarded, the task_get calls 30 ms late, so that
    // most of the night is still to fetch when that one has failed.
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const id = /\/task_get\/advanced\/([0-9a-f-]+)/.exec(req.url ?? '')?.[1];
      poisoned ??= id;
      if (id !== undefined && id === poisoned) {
        poisonedCalls++;
        res.writeHead(503, { 'content-type': 'application/json' });
        return res.end('{"status_code":50000}');
      }
      const upstream = await forward(target, req, chunks);
      if (id !== undefined) await new Promise((r) => setTimeout(r, 30));
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(upstream.text);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const proxy = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // More tasks than the collector fetches at once (16), so that stopping at the failure would leave some
    // (a rate-limit window of 100 ms: the spec's minute would hold the 60 fetches and the retries).
    const sixty = parsePipeline(
      `name: resume\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${Array.from({ length: 60 }, (_, i) => `k${i}`).join(', ')}]\n`,
      'resume.yaml',
      {},
    );
    const first = await runPipeline(base(proxy, { pipeline: sixty, collectTimeoutMs: 10_000, limits: { windowMs: 100 } }));
    expect(poisonedCalls).toBeGreaterThan(1); // the client retried it
    expect(first.state).toBe('partial');
    expect(first.stopKind).toBe('unavailable');
    expect(first.tasks).toMatchObject({ posted: 60, collected: 59, pending: 1 });
    expect(first.stopReason).toContain(`task_get failed for 1 task(s) (${poisoned})`);
    expect(first.stopReason).toContain('59 other task(s) of this pass were fetched');

    const second = await runPipeline(base(sandbox.url, { pipeline: sixty, collectTimeoutMs: 10_000, limits: { windowMs: 100 } }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ posted: 60, collected: 60, pending: 0 });
    expect(sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
  });

  it('finishes a run that failed part way instead of buying its tasks again', async () => {
    sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const target = sandbox.url;
    let posts = 0;
    // The second POST is refused with 401 (a revoked key): the run fails after buying 100 tasks.
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (req.url?.endsWith('/task_post') && ++posts === 2) {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end('{"status_code":40100,"status_message":"You are not authorized.","tasks":[]}');
      }
      const upstream = await forward(target, req, chunks);
      res.writeHead(upstream.status, { 'content-type': 'application/json' });
      res.end(upstream.text);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const proxy = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const many = parsePipeline(
      `name: resume\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${Array.from({ length: 150 }, (_, i) => `k${i}`).join(', ')}]\n`,
      'resume.yaml',
      {},
    );
    await expect(runPipeline(base(proxy, { pipeline: many, limits: { windowMs: 100 } }))).rejects.toThrow(/HTTP 401/);
    expect((await runsAndTasks()).runs.map((r) => r.state)).toEqual(['failed']);

    const second = await runPipeline(base(sandbox.url, { pipeline: many, collectTimeoutMs: 10_000, limits: { windowMs: 100 } }));
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ planned: 150, posted: 150, collected: 150 });
    expect(sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(2); // 100 + 50, none twice
  });
});
