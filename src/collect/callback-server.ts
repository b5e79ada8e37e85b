import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { endpointPath, type Endpoint } from '../catalog/index.js';
import { CallbackBodyError, CallbackLanding, type LandedCallback } from './land-callback.js';
import type { InFlight, InFlightTask } from './in-flight.js';
import { echoMismatch } from './task-echo.js';

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
  /** The collection's tasks in flight: the ids this process posted are the only ones accepted. */
  inFlight: InFlight;
  /** The kind of callback this process's URLs were given for; the other kind is refused (404). */
  callback: 'postback' | 'pingback';
  /** Longest a client may take to send its request headers; default 5 s. */
  headersTimeoutMs?: number;
  /** Longest a client may take to send its whole request, body included; default 9 s (the service's 10-second rule). */
  bodyTimeoutMs?: number;
  /** Most connections open at once (more are refused at accept); default 512. */
  maxConnections?: number;
  /** Landing slots, and how long a body waits for one. */
  landing?: LandingSlots;
  /** How long a callback naming a tag of a POST still in flight waits for its id; default 3 s. */
  idWaitMs?: number;
  /** A postback body is on disk (acknowledged already). */
  onLanded: (c: LandedCallback) => void;
  /** A postback body also held other tasks: they were dropped, never landed (for the log). */
  onIgnored?: (taskId: string, ignored: readonly string[]) => void;
  /** A pingback: the task is done, its result still has to be fetched. */
  onPinged: (task: InFlightTask) => void;
  now: () => Date;
}

/** Bodies gunzipped and landed at once, and how long a received body waits for one of those slots. */
export interface LandingSlots {
  /** Default 32. */
  slots?: number;
  /**
   * Past it the callback is answered 503 at once (the service lists it as failed, and the run
   * gets it by `webhook_resend` or `task_get`) rather than left to pass the service's 10 s.
   * Default 4 s.
   */
  slotWaitMs?: number;
}

/** What the server has seen, for the run's notes and for tests. */
export interface CallbackCounts {
  landed: number;
  pinged: number;
  /** Other tasks found in accepted postback bodies: dropped, never landed nor loaded. */
  ignoredTasks: number;
  /** Refused by status: 403 wrong secret, 404 unknown task, 413 too large, 400 bad body, ... */
  refused: Record<number, number>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KINDS = new Set(['postback', 'pingback']);
/** Bodies read, gunzipped and landed at once; more wait their turn (memory stays bounded by this times the limits). */
const MAX_CONCURRENT_BODIES = 32;
const HEADERS_TIMEOUT_MS = 5_000;
const BODY_TIMEOUT_MS = 9_000;
const MAX_CONNECTIONS = 512;
const SLOT_WAIT_MS = 4_000;

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
  readonly counts: CallbackCounts = { landed: 0, pinged: 0, ignoredTasks: 0, refused: {} };
  readonly #o: CallbackServerOptions;
  readonly #server: Server;
  readonly #secret: Buffer;
  readonly #inflight = new Set<Promise<void>>();
  readonly #landing: CallbackLanding;
  #slots: number;
  /** Bytes of bodies being read right now, all requests together. */
  #buffered = 0;
  readonly #queue: Array<(got: boolean) => void> = [];
  #closing = false;

  private constructor(o: CallbackServerOptions) {
    this.#o = o;
    this.#secret = Buffer.from(o.secret);
    this.#slots = o.landing?.slots ?? MAX_CONCURRENT_BODIES;
    this.#landing = new CallbackLanding(o.warehouseDir, { runId: o.runId, pipeline: o.pipeline });
    const headersTimeout = o.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
    const requestTimeout = Math.max(headersTimeout, o.bodyTimeoutMs ?? BODY_TIMEOUT_MS);
    // Slow clients cannot hold the server: headers and the whole request each have a time
    // limit, checked often (Node checks every 30 s by default, so limits ran up to 30 s
    // late), an idle socket is closed, and connections are capped.
    this.#server = createServer(
      {
        headersTimeout,
        requestTimeout,
        connectionsCheckingInterval: Math.min(1_000, Math.max(100, Math.floor(headersTimeout / 4))),
        keepAliveTimeout: 5_000,
      },
      (req, res) => {
        const p = this.#handle(req, res).finally(() => this.#inflight.delete(p));
        this.#inflight.add(p);
      },
    );
    this.#server.timeout = requestTimeout;
    this.#server.maxConnections = o.maxConnections ?? MAX_CONNECTIONS;
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
      // A URL answers only the kind it was handed out for: a pingback on a postback run
      // would queue task_get calls nobody asked for.
      if (kind !== this.#o.callback) throw new Refusal(404, `this run takes ${this.#o.callback}s, not ${kind}s`);
      if ((kind === 'postback') !== (req.method === 'POST') || (kind === 'pingback' && req.method !== 'GET')) {
        throw new Refusal(405, `${kind} takes ${kind === 'postback' ? 'POST' : 'GET'}`);
      }
      const id = url.searchParams.get('id') ?? '';
      if (!UUID.test(id)) throw new Refusal(400, 'id is not a task id');
      const task = await this.#o.inFlight.find(id, url.searchParams.get('tag'), this.#o.idWaitMs ?? 3_000);
      // Only tasks this process posted with a callback URL (they carry their task_get); a task
      // pull handles in the same registry never takes a callback.
      const get = task?.get;
      if (!task || !get) throw new Refusal(404, 'not a task this run posted');
      if (this.#o.inFlight.isSettled(task.taskId)) {
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
      // The body is read before taking a landing slot, so slow senders cannot hold the slots;
      // the bytes being read by all requests together stay under a budget instead.
      const sent = await this.#readBody(req);
      const landed = await this.#withSlot(() => this.#landPostback(req, sent, task, get));
      answer(res, 200, 'ok');
      this.counts.landed++;
      if (landed.ignored.length > 0) {
        this.counts.ignoredTasks += landed.ignored.length;
        this.#o.onIgnored?.(landed.taskId, landed.ignored);
      }
      this.#o.onLanded(landed);
    } catch (err) {
      const status = err instanceof Refusal ? err.status : 500;
      this.counts.refused[status] = (this.counts.refused[status] ?? 0) + 1;
      // A refused request's unread body is not waited for: the connection is closed.
      const unread = !req.complete;
      answer(res, status, err instanceof Refusal ? err.message : 'could not land the body; resend later', unread);
      if (unread) {
        req.removeAllListeners('data');
        req.resume();
        res.once('finish', () => req.socket.destroy());
        if (res.writableFinished || res.destroyed) req.socket.destroy();
      }
    }
  }

  #secretMatches(segment: string): boolean {
    const got = Buffer.from(segment);
    return got.length === this.#secret.length && timingSafeEqual(got, this.#secret);
  }

  /** Runs `fn` in a landing slot; refuses with 503 when none frees up within `slotWaitMs`. */
  async #withSlot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#slots === 0) {
      const got = await new Promise<boolean>((resolve) => {
        const waiter = (ok: boolean) => {
          clearTimeout(timer);
          resolve(ok);
        };
        const timer = setTimeout(() => {
          const at = this.#queue.indexOf(waiter);
          if (at >= 0) this.#queue.splice(at, 1);
          resolve(false);
        }, this.#o.landing?.slotWaitMs ?? SLOT_WAIT_MS);
        this.#queue.push(waiter);
      });
      if (!got) throw new Refusal(503, 'too many callbacks being landed; resend later');
    } else this.#slots--;
    try {
      return await fn();
    } finally {
      const next = this.#queue.shift();
      if (next) next(true);
      else this.#slots++;
    }
  }

  /** The body as sent: at most `maxBodyBytes`, within the body time limit, while the read budget lasts (else 503: resend later). */
  async #readBody(req: IncomingMessage): Promise<Buffer> {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.#o.maxBodyBytes)
      throw new Refusal(413, `body of ${declared} bytes is over the ${this.#o.maxBodyBytes}-byte limit`);
    const budget = MAX_CONCURRENT_BODIES * this.#o.maxBodyBytes;
    let mine = 0;
    try {
      return await readCapped(req, this.#o.maxBodyBytes, 'body', this.#o.bodyTimeoutMs ?? BODY_TIMEOUT_MS, (n) => {
        if (this.#buffered + n > budget) throw new Refusal(503, 'too many bodies being received; resend later');
        this.#buffered += n;
        mine += n;
      });
    } finally {
      this.#buffered -= mine;
    }
  }

  async #landPostback(req: IncomingMessage, sent: Buffer, task: InFlightTask, get: Endpoint): Promise<LandedCallback> {
    const { taskId, echo } = task;
    const gzipped = req.headers['content-encoding'] === 'gzip' || (sent[0] === 0x1f && sent[1] === 0x8b);
    const text = (gzipped ? gunzipCapped(sent, this.#o.maxUnzippedBytes) : sent).toString('utf8');
    try {
      return await this.#landing.land({
        taskId,
        path: endpointPath(get, taskId),
        endpointId: get.id,
        body: text,
        receivedAt: this.#o.now(),
        ...(echo ? { verify: (entry) => echoMismatch(echo, entry) } : {}),
      });
    } catch (err) {
      if (err instanceof CallbackBodyError) throw new Refusal(400, err.message);
      throw err;
    }
  }
}

function answer(res: ServerResponse, status: number, text: string, close = false): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...(close || status === 413 ? { connection: 'close' } : {}),
  });
  res.end(text);
}

/**
 * Reads a request body, refusing as soon as it passes `max` bytes (413) or takes longer
 * than `ms` (408); `take` is told of each chunk and may refuse it by throwing.
 */
function readCapped(req: IncomingMessage, max: number, what: string, ms: number, take: (n: number) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      req.removeAllListeners('data');
      reject(new Refusal(408, `${what} not received within ${ms} ms`));
    }, ms);
    req.on('data', (c: Buffer) => {
      size += c.length;
      try {
        if (size > max) throw new Refusal(413, `${what} is over the ${max}-byte limit`);
        take(c.length);
      } catch (err) {
        clearTimeout(timer);
        req.removeAllListeners('data');
        reject(err);
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
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
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
      throw new Refusal(413, `body is over the ${max}-byte limit once unzipped`);
    throw new Refusal(400, 'body is not valid gzip');
  }
}
