import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunOptions } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { silentLogger, tempDir, warmReferenceLists } from './helpers.js';

const KEYWORDS = Array.from({ length: 40 }, (_, i) => `deadline ${i}`);
const pipeline = parsePipeline(
  `name: deadline\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${KEYWORDS.map((k) => `"${k}"`).join(', ')}]\n`,
  'deadline.yaml',
  {},
);

/**
 * `collection.deadline_minutes` (`--collect-timeout`) is when collection stops: a scheduler
 * counts on it. Neither the wait for the next poll nor a long pass of task_get calls may run
 * past it; what is left stays posted, and the next run collects it without buying it again.
 */
describe('the collection deadline', () => {
  let sandbox: SandboxHandle;
  let server: Server | undefined;
  let wh: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    wh = await tempDir('pipeline-deadline-');
    await warmReferenceLists(wh.dir, pipeline, 'deadline.yaml', () => new Date());
  });
  afterEach(async () => {
    await sandbox.close();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
    await wh.cleanup();
  });

  const options = (baseUrl: string, extra: Partial<RunOptions>): RunOptions => ({
    pipeline,
    file: 'deadline.yaml',
    warehouseDir: wh.dir,
    baseUrl,
    apiKey: 'svc_live_testdeadline',
    logger: silentLogger,
    limits: { windowMs: 50 },
    models: false,
    ...extra,
  });

  it('is not slept past: a poll due after it is not waited for', async () => {
    sandbox = await startSandbox({ readyAfterMs: 3_000 });
    const t0 = performance.now();
    // Nothing is ready at the first poll, and the next poll would come a minute later.
    const r = await runPipeline(options(sandbox.url, { pollIntervalMs: 60_000, collectTimeoutMs: 1_000 }));
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(r.state).toBe('partial');
    expect(r.stopKind).toBe('unknown');
    expect(r.stopReason).toContain('40 task(s) still to collect at the collection deadline');
    expect(r.tasks).toMatchObject({ posted: 40, collected: 0, pending: 40 });
  });

  it('ends a pass of task_get calls: no call starts after it, and the next run collects the rest', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    const target = sandbox.url;
    // Every task_get answered 1.5 s late: a pass over 40 ready tasks takes three rounds of
    // the collector's calls in flight, well past a 1 s deadline.
    const gets: number[] = [];
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const isGet = req.url?.includes('/task_get/') ?? false;
      if (isGet) gets.push(performance.now());
      const upstream = await request(target + req.url, {
        method: req.method as 'GET' | 'POST',
        headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      const text = await upstream.body.text();
      if (isGet) await new Promise((r) => setTimeout(r, 1_500));
      res.writeHead(upstream.statusCode, { 'content-type': 'application/json' });
      res.end(text);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const proxy = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const first = await runPipeline(options(proxy, { pollIntervalMs: 10, collectTimeoutMs: 1_000 }));
    expect(first.state).toBe('partial');
    // Only the first round of calls in flight (16) started: each answer came after the deadline.
    expect(gets.length).toBeLessThanOrEqual(16);
    expect(first.tasks.collected).toBe(gets.length);
    expect(first.tasks.pending).toBe(40 - gets.length);

    const second = await runPipeline(options(sandbox.url, { pollIntervalMs: 10, collectTimeoutMs: 20_000 }));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ posted: 40, collected: 40, pending: 0 });
    expect(sandbox.log.filter((l) => l.path.endsWith('/task_post'))).toHaveLength(1);
  });
});
