// The later cases of run-resume.test.ts, split off so vitest runs the two halves in parallel (issue 45).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { forward, pipeline, resumeHarness } from './resume-helpers.js';

describe('a second run finishes an unfinished one and never pays twice', () => {
  const h = resumeHarness();
  const { clock, base, runsAndTasks } = h;

  it('posts tasks of unknown outcome that the service says it never created', async () => {
    let hits = 0;
    h.server = createServer((req) => {
      hits++;
      req.socket.destroy(); // the request arrived somewhere else; the emulator never saw it
    });
    await new Promise<void>((r) => h.server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(h.server.address() as AddressInfo).port}`;
    const first = await runPipeline(base(url));
    expect(hits).toBe(1);
    expect(first.stopKind).toBe('unknown');

    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const second = await runPipeline(base(h.sandbox.url, { collectTimeoutMs: 10_000 }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ planned: 5, posted: 5, collected: 5 });
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
  });

  it('stops before posting when aborted, and a later run posts everything once', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const stop = new AbortController();
    stop.abort();
    const first = await runPipeline(base(h.sandbox.url, { signal: stop.signal }));
    expect(first.state).toBe('partial');
    expect(first.stopKind).toBe('interrupted');
    expect(h.sandbox.log).toHaveLength(0);
    const second = await runPipeline(base(h.sandbox.url, { collectTimeoutMs: 10_000 }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(h.sandbox.log.filter((l) => l.method === 'POST')).toHaveLength(1);
  });

  it('starts a fresh run with newRun even when the last one is unfinished', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 60_000 });
    const first = await runPipeline(base(h.sandbox.url));
    const second = await runPipeline(base(h.sandbox.url, { newRun: true }));
    expect(second.runId).not.toBe(first.runId);
    expect(h.sandbox.log.filter((l) => l.method === 'POST')).toHaveLength(2);
  });

  it('collects a task fetched but never loaded, though it has left the ready list', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const target = h.sandbox.url;
    let gets = 0;
    // Forwards everything; the 2nd task fetched reaches the emulator (and leaves its ready
    // list) but its answer is replaced by a 503, every time the client retries it.
    h.server = createServer(async (req, res) => {
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
    await new Promise<void>((r) => h.server!.listen(0, '127.0.0.1', r));
    const proxy = `http://127.0.0.1:${(h.server.address() as AddressInfo).port}`;
    const first = await runPipeline(base(proxy, { collectTimeoutMs: 10_000 }));
    expect(first.state).toBe('partial');
    expect(first.tasks.collected).toBe(1);

    const second = await runPipeline(base(h.sandbox.url, { collectTimeoutMs: 10_000 }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ posted: 5, collected: 5, pending: 0 });
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
  });

  it('fetches the other tasks past one whose task_get keeps failing, and the next run fetches that one', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const target = h.sandbox.url;
    let poisoned: string | undefined;
    let poisonedCalls = 0;
    // The first task fetched is answered 503 every time (the service fails to build that one
    // result), at once; every other call is forwarded, the task_get calls 30 ms late, so that
    // most of the night is still to fetch when that one has failed.
    h.server = createServer(async (req, res) => {
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
    await new Promise<void>((r) => h.server!.listen(0, '127.0.0.1', r));
    const proxy = `http://127.0.0.1:${(h.server.address() as AddressInfo).port}`;
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

    const second = await runPipeline(base(h.sandbox.url, { pipeline: sixty, collectTimeoutMs: 10_000, limits: { windowMs: 100 } }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ posted: 60, collected: 60, pending: 0 });
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
  });

  it('finishes a run that failed part way instead of buying its tasks again', async () => {
    h.sandbox = await startSandbox({ now: clock.now, readyAfterMs: 0 });
    const target = h.sandbox.url;
    let posts = 0;
    // The second POST is refused with 401 (a revoked key): the run fails after buying 100 tasks.
    h.server = createServer(async (req, res) => {
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
    await new Promise<void>((r) => h.server!.listen(0, '127.0.0.1', r));
    const proxy = `http://127.0.0.1:${(h.server.address() as AddressInfo).port}`;
    const many = parsePipeline(
      `name: resume\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${Array.from({ length: 150 }, (_, i) => `k${i}`).join(', ')}]\n`,
      'resume.yaml',
      {},
    );
    await expect(runPipeline(base(proxy, { pipeline: many, limits: { windowMs: 100 } }))).rejects.toThrow(/HTTP 401/);
    expect((await runsAndTasks()).runs.map((r) => r.state)).toEqual(['failed']);

    const second = await runPipeline(base(h.sandbox.url, { pipeline: many, collectTimeoutMs: 10_000, limits: { windowMs: 100 } }));
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ planned: 150, posted: 150, collected: 150 });
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(2); // 100 + 50, none twice
  });
});
