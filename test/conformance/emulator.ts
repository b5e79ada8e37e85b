/**
 * Black-box access to the emulator for the conformance suite: the emulator runs as a child
 * process (`node bin/pipeline.mjs sandbox`), and every call is a plain HTTP request. Nothing
 * here (nor anywhere under test/conformance/) imports from src/: see README.md and
 * test/unit/project/conformance-imports.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The two key kinds of Authentication rule 2; the emulator is told to accept exactly these. */
export const LIVE = 'svc_live_testconformance0000000000000001';
export const SANDBOX = 'svc_sandbox_conformance000000000001';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The spec's UTC form for errors and id_list: `yyyy-mm-dd hh-mm-ss +00:00`. */
export const SPEC_DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}-\d{2}-\d{2} \+00:00$/;

export type Json = any;

export interface Reply {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: Json;
  text: string;
}

export interface CallOptions {
  /** Bearer key; `null` sends no Authorization header. */
  key?: string | null;
  body?: unknown;
  /** Raw body, sent as is (for encoding tests). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Emulator {
  url: string;
  call(method: string, path: string, opts?: CallOptions): Promise<Reply>;
  stop(): Promise<void>;
}

/**
 * Starts `pipeline sandbox --port 0` with the two keys above and `args`, and waits for the
 * address it prints.
 */
export async function startEmulator(args: string[] = []): Promise<Emulator> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['bin/pipeline.mjs', 'sandbox', '--port', '0', '--live-key', LIVE, '--sandbox-key', SANDBOX, ...args],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // If the test process ends without afterAll (a killed run, a worker torn down), take the child along.
  const killChild = () => child.kill('SIGTERM');
  process.once('exit', killChild);
  child.once('exit', () => process.off('exit', killChild));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM'); // do not leave a half-started emulator behind
      reject(new Error(`emulator did not start:\n${out}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`emulator exited (${code}):\n${out}`));
    });
  });
  const call = async (method: string, path: string, opts: CallOptions = {}): Promise<Reply> => {
    const key = opts.key === undefined ? SANDBOX : opts.key;
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (key !== null) headers.Authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['Content-Type'] = 'application/json';
    }
    const res = await fetch(`${url}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: Json = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { url, call, stop };
}

/** The spec's success rule (Resources, "Success rule"; Errors rule 1). */
export function succeeded(r: Reply): boolean {
  if (r.status < 200 || r.status > 299) return false;
  if (typeof r.body !== 'object' || r.body === null || r.body.status_code !== 20000) return false;
  return (r.body.tasks as Json[]).every((t) => t.status_code === 20000 || t.status_code === 20100);
}

/** Charged CNY from `X-Svc-Charge-CNY` as a number (NaN when absent). */
export function charge(r: Reply): number {
  return Number(r.headers.get('x-svc-charge-cny') ?? NaN);
}

export function balance(r: Reply): number {
  return Number(r.headers.get('x-svc-balance-cny') ?? NaN);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value or `ms` pass. */
export async function until<T>(fn: () => Promise<T | undefined | null | false>, ms = 10_000, every = 50): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(every);
  }
}

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Gunzipped text, when the request was gzip-encoded. */
  gunzipped?: string;
}

/** A tiny loopback HTTP receiver for pingbacks and postbacks. */
export async function startReceiver(answer: (r: Received) => { status: number; delayMs?: number } = () => ({ status: 200 })) {
  const seen: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      try {
        if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) r.gunzipped = gunzipSync(body).toString('utf8');
      } catch {
        // not gzip after all
      }
      seen.push(r);
      const { status, delayMs = 0 } = answer(r);
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end('ok');
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A date in the spec's `yyyy-mm-dd hh-mm-ss +00:00` form (errors and id_list windows). */
export function specDate(d: Date): string {
  return d.toISOString().replace('T', ' ').replace(/:/g, '-').slice(0, 19) + ' +00:00';
}

export const DAY_MS = 86_400_000;
