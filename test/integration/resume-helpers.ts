// The set-up shared by run-resume.test.ts and run-resume-collect.test.ts (one suite split in two
// so vitest runs the halves in parallel): the pipeline, a clock moved by hand, a fresh warehouse
// per test with the reference lists warmed, and a proxy that drops the emulator's answers.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, beforeEach } from 'vitest';
import { parsePipeline, type Pipeline } from '../../src/config/index.js';
import { type RunOptions } from '../../src/run/index.js';
import { type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir, warmReferenceLists } from './helpers.js';

export const pipeline: Pipeline = parsePipeline(
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
export function handClock(startIso = '2026-11-20T09:00:00Z') {
  let t = Date.parse(startIso);
  return { now: () => new Date(t), advance: (ms: number) => void (t += ms) };
}

/** Sends a request a proxy received on to `target` (the emulator), with its body; the answer's status and text. */
export async function forward(target: string, req: IncomingMessage, body: Buffer[]): Promise<{ status: number; text: string }> {
  const upstream = await request(target + req.url, {
    method: req.method as 'GET' | 'POST',
    headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
    body: body.length ? Buffer.concat(body) : undefined,
  });
  return { status: upstream.statusCode, text: await upstream.body.text() };
}

/**
 * Registers the per-test set-up (a fresh warehouse with the SERP places checked; the emulator and
 * the test's server closed after each test) in the calling describe block, and returns the test's
 * handles: `sandbox` and `server` for the test to set, `wh` the warehouse folder.
 */
export function resumeHarness() {
  const h = {
    wh: undefined as unknown as { dir: string; cleanup: () => Promise<void> },
    sandbox: undefined as SandboxHandle | undefined,
    server: undefined as Server | undefined,
    clock: handClock(),
    base,
    answerDropper,
    runsAndTasks,
  };
  const clock = h.clock;

  beforeEach(async () => {
    h.wh = await tempDir('pipeline-resume-');
    // The SERP places were checked by an earlier night: the faults below hit the run's own calls.
    await warmReferenceLists(h.wh.dir, pipeline, 'resume.yaml', clock.now);
  });
  afterEach(async () => {
    await h.sandbox?.close();
    await new Promise<void>((r) => (h.server ? h.server.close(() => r()) : r()));
    h.sandbox = undefined;
    h.server = undefined;
    await h.wh.cleanup();
  });

  function base(url: string, extra: Partial<RunOptions> = {}): RunOptions {
    return {
      pipeline,
      file: 'resume.yaml',
      warehouseDir: h.wh.dir,
      baseUrl: url,
      apiKey: 'svc_live_testresumetest',
      logger: silentLogger,
      pollIntervalMs: 1,
      collectTimeoutMs: 0,
      now: clock.now,
      sleep: async () => {},
      // The resume tests read the tasks, the ledger and the emulator: no mart.
      models: false,
      ...extra,
    };
  }

  /** A proxy (the test's `server`) that forwards each request to `target` (the emulator), then drops the answer on the floor. */
  async function answerDropper(target: string): Promise<string> {
    h.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      await forward(target, req, chunks);
      res.socket?.destroy();
    });
    await new Promise<void>((r) => h.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(h.server.address() as AddressInfo).port}`;
  }

  async function runsAndTasks() {
    return withWarehouse(h.wh.dir, async (db) => ({
      runs: await db.all<{ run_id: string; state: string }>(`SELECT run_id, state FROM runs ORDER BY started_at`),
      tasks: await db.all<{ state: string; n: number }>(`SELECT state, count(*)::INT AS n FROM tasks GROUP BY state ORDER BY state`),
    }));
  }

  return h;
}
