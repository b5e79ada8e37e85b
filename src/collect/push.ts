import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { endpointPath } from '../catalog/index.js';
import { CallbackBodyError, CallbackLanding, type LandedCallback } from './land-callback.js';
import type { PostedTask, PostedTasks } from './posted-tasks.js';

export interface CallbackServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The path segment every callback URL of this process carries; anything else gets 403. */
  secret: string;
  /** Bodies land under `raw/` of this warehouse folder, as this run's responses. */
  warehouseDir: string;
  runId: string;
  pipeline: string;
  /** Largest body accepted as sent, and after gunzip; larger ones get 413 and land nothing. */
  maxBodyBytes: number;
  maxUnzippedBytes: number;
  /** Tasks this process posted: the only ids accepted. */
  posted: PostedTasks;
  /** How long a callback naming a tag of a POST still in flight waits for its id; default 3 s. */
  idWaitMs?: number;
  /** A postback body is on disk (acknowledged already). */
  onLanded: (c: LandedCallback) => void;
  /** A pingback: the task is done, its result still has to be fetched. */
  onPinged: (task: PostedTask) => void;
  now: () => Date;
}

/** What the server has seen, for the run's notes and for tests. */
export interface CallbackCounts {
  landed: number;
  pinged: number;
  /** Refused by status: 403 wrong secret, 404 unknown task, 413 too large, 400 bad body, ... */
  refused: Record<number, number>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KINDS = new Set(['postback', 'pingback']);
/** Bodies gunzipped and landed at once; more wait their turn (memory stays bounded by this times the limits). */
const MAX_CONCURRENT_BODIES = 32;

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The push side of collection: an HTTP server for the service's callbacks. A callback URL
 * is `<public url>/<secret>/postback?id=$id&tag=$tag` (or `/pingback`); the secret is made
 * fresh for each run process, so only URLs this process handed out are served, and only
 * for task ids it posted. A postback body (gzip) is read with a cap on its size as sent
 * and after gunzip, landed as a raw file (fsynced), and only then acknowledged with 200,
 * well inside the service's 10-second rule; loading happens after the answer. Anything
 * refused gets a 4xx, so the service records a failed callback and the run recovers the
 * task through `errors` and `webhook_resend`, or pulls it.
 */
export class CallbackServer {
  readonly counts: CallbackCounts = { landed: 0, pinged: 0, refused: {} };
  readonly #o: CallbackServerOptions;
  readonly #server: Server;
  readonly #secret: Buffer;
  readonly #inflight = new Set<Promise<void>>();
  readonly #landing: CallbackLanding;
  #slots = MAX_CONCURRENT_BODIES;
  readonly #queue: Array<() => void> = [];
  #closing = false;

  private constructor(o: CallbackServerOptions) {
    this.#o = o;
    this.#secret = Buffer.from(o.secret);
    this.#landing = new CallbackLanding(o.warehouseDir, { runId: o.runId, pipeline: o.pipeline });
    this.#server = createServer({ requestTimeout: 60_000, headersTimeout: 10_000 }, (req, res) => {
      const p = this.#handle(req, res).finally(() => this.#inflight.delete(p));
      this.#inflight.add(p);
    });
  }

  /** Starts listening; resolves once the port is bound. */
  static async start(o: CallbackServerOptions): Promise<CallbackServer> {
    const s = new CallbackServer(o);
    await new Promise<void>((resolve, reject) => {
      s.#server.once('error', reject);
      s.#server.listen(o.port, o.host, () => {
        s.#server.off('error', reject);
        resolve();
      });
    });
    return s;
  }

  /** The bound port (useful with port 0). */
  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** `http://host:port`, for a service on this machine when no public URL is configured. */
  get localUrl(): string {
    const host = this.#o.host === '0.0.0.0' || this.#o.host === '::' ? '127.0.0.1' : this.#o.host;
    return `http://${host.includes(':') ? `[${host}]` : host}:${this.port}`;
  }

  /**
   * Stops taking callbacks: later requests get 503 (the service lists them as failed and
   * puts their tasks on the ready list, where pull finds them), the listener closes, and
   * the callbacks already being landed finish first.
   */
  async close(): Promise<void> {
    if (!this.#closing) {
      this.#closing = true;
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      this.#server.closeIdleConnections();
      while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
      this.#server.closeAllConnections();
      await closed;
    }
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (this.#closing) throw new Refusal(503, 'not taking callbacks any more; the run pulls this task');
      const url = new URL(req.url ?? '/', 'http://callback.invalid');
      const segments = url.pathname.split('/').filter(Boolean);
      const kind = segments.at(-1) ?? '';
      if (!KINDS.has(kind) || segments.length < 2) throw new Refusal(404, 'no such callback path');
      if (!this.#secretMatches(segments.at(-2)!)) throw new Refusal(403, 'wrong secret');
      if ((kind === 'postback') !== (req.method === 'POST') || (kind === 'pingback' && req.method !== 'GET')) {
        throw new Refusal(405, `${kind} takes ${kind === 'postback' ? 'POST' : 'GET'}`);
      }
      const id = url.searchParams.get('id') ?? '';
      if (!UUID.test(id)) throw new Refusal(400, 'id is not a task id');
      const task = await this.#o.posted.find(id, url.searchParams.get('tag'), this.#o.idWaitMs ?? 3_000);
      if (!task) throw new Refusal(404, 'not a task this run posted');
      if (task.settled) {
        req.resume();
        answer(res, 200, 'ok (already collected)');
        return;
      }
      if (kind === 'pingback') {
        req.resume();
        answer(res, 200, 'ok');
        this.counts.pinged++;
        this.#o.onPinged(task);
        return;
      }
      const landed = await this.#withSlot(() => this.#landPostback(req, task));
      answer(res, 200, 'ok');
      this.counts.landed++;
      this.#o.onLanded(landed);
    } catch (err) {
      const status = err instanceof Refusal ? err.status : 500;
      this.counts.refused[status] = (this.counts.refused[status] ?? 0) + 1;
      answer(res, status, err instanceof Refusal ? err.message : 'could not land the body; resend later');
      if (!req.complete) req.resume();
    }
  }

  #secretMatches(segment: string): boolean {
    const got = Buffer.from(segment);
    return got.length === this.#secret.length && timingSafeEqual(got, this.#secret);
  }

  async #withSlot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#slots === 0) await new Promise<void>((r) => this.#queue.push(r));
    else this.#slots--;
    try {
      return await fn();
    } finally {
      const next = this.#queue.shift();
      if (next) next();
      else this.#slots++;
    }
  }

  async #landPostback(req: IncomingMessage, task: PostedTask): Promise<LandedCallback> {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.#o.maxBodyBytes) throw new Refusal(413, `body of ${declared} bytes is over the ${this.#o.maxBodyBytes}-byte limit`);
    const sent = await readCapped(req, this.#o.maxBodyBytes, 'body');
    const gzipped = req.headers['content-encoding'] === 'gzip' || (sent[0] === 0x1f && sent[1] === 0x8b);
    const text = (gzipped ? gunzipCapped(sent, this.#o.maxUnzippedBytes) : sent).toString('utf8');
    try {
      return await this.#landing.land({ taskId: task.taskId, path: endpointPath(task.get, task.taskId), endpointId: task.get.id, body: text, receivedAt: this.#o.now() });
    } catch (err) {
      if (err instanceof CallbackBodyError) throw new Refusal(400, err.message);
      throw err;
    }
  }
}

function answer(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), ...(status === 413 ? { connection: 'close' } : {}) });
  res.end(text);
}

/** Reads a request body, refusing (413) as soon as it passes `max` bytes. */
function readCapped(req: IncomingMessage, max: number, what: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.resume();
        reject(new Refusal(413, `${what} is over the ${max}-byte limit`));
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/**
 * Gunzips in one call (no thread-pool round trip per chunk, which DuckDB's queries share)
 * that stops the moment the output passes `max` bytes: a gzip bomb costs `max` of memory.
 */
function gunzipCapped(gz: Buffer, max: number): Buffer {
  try {
    return gunzipSync(gz, { maxOutputLength: max });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw new Refusal(413, `body is over the ${max}-byte limit once unzipped`);
    throw new Refusal(400, 'body is not valid gzip');
  }
}
