import { randomBytes } from 'node:crypto';
import { taskFunctionOf, type Endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { ResolvedCollection } from '../config/index.js';
import { EtlError } from '../errors.js';
import type { DamagedRawFile, Warehouse } from '../warehouse/index.js';
import { TaskLoader } from './load-batcher.js';
import { InFlight } from './in-flight.js';
import { CallbackServer, type LandingSlots } from './callback-server.js';
import { failedCallbacks, resendCallbacks } from './recover-callbacks.js';
import { echoOf } from './task-echo.js';

/** The callback server's settings: the resolved `collection` block of the pipeline file, in push mode. */
export type PushSettings = Omit<Extract<ResolvedCollection, { mode: 'push' }>, 'mode' | 'deadlineMs'>;

export interface PushStartOptions extends PushSettings {
  wh: Warehouse;
  runId: string;
  pipeline: string;
  now: () => Date;
  /** The URL secret; random (128 bits) by default. Tests pass one to reach the server from outside. */
  secret?: string;
  /** A postback body held tasks besides the one its URL names: those were dropped (log them). */
  onIgnored?: (taskId: string, ignored: readonly string[]) => void;
  /** The server's landing slots; its defaults unless given. */
  landing?: LandingSlots;
}

export interface PushWaitOptions {
  client: ServiceClient;
  /** Epoch ms at which collection stops (the run's deadline). */
  deadlineAt: number;
  /** How often failed callbacks are looked up in `{api}/errors`. */
  checkEveryMs: number;
  signal?: AbortSignal;
  onProgress?: (p: { collected: number; failed: number; pending: number }) => void;
}

/** How the push wait ended. */
export type PushEnd = 'all' | 'deadline' | 'interrupted' | 'stalled' | 'load_failed';

export interface PushResult {
  ended: PushEnd;
  /** Postbacks landed and pingbacks taken by the server. */
  landed: number;
  pinged: number;
  /** Requests refused, by HTTP status (403 wrong secret, 404 unknown task, 413 too large, ...). */
  refused: Record<number, number>;
  collected: number;
  failed: number;
  rowsLoaded: number;
  tables: Set<string>;
  /** Callbacks the service was asked to send again, and tasks fetched with task_get instead. */
  resent: number;
  fetched: number;
  /** Tasks of this process still out when the wait ended: pulled next, or by the next run. */
  pending: number;
  /** Landed files DuckDB read short as gzip, loaded again from plain text. */
  rereadPlain: string[];
  /** Callback files the night's compactions found damaged and kept apart (their tasks are to be fetched again). */
  damaged: DamagedRawFile[];
  /** Compactions during the night that failed (their files were left to the run's end). */
  compactErrors: string[];
}

/** Resends per task before its result is fetched with task_get instead. */
const MAX_RESENDS = 2;
/** Task codes that mean "not done yet". */
const NOT_READY = new Set([40601, 40602]);

/** Shortest turn of the waiting loop. */
const LOOP_EVERY_MS = 25;

/**
 * Push collection for one run process: a {@link CallbackServer} with a fresh secret, the
 * registry of the tasks in flight ({@link InFlight}: the ids this process posts are the only
 * ones the server accepts; pinged tasks wait there as `fetch_due`, landed ones as `landed`
 * until the loader settles them), and a {@link TaskLoader} that loads landed bodies on a
 * second database connection while the run keeps posting. After posting, {@link collect} waits for the callbacks; failed
 * ones (listed by `{api}/errors`) are resent with `webhook_resend` (free) or, after
 * {@link MAX_RESENDS} or when our side refused them, fetched with `task_get`. Whatever has
 * not come when the wait ends is left to pull.
 */
export class PushCollector {
  readonly inFlight: InFlight;
  readonly #o: PushStartOptions;
  readonly #server: CallbackServer;
  readonly #loader: TaskLoader;
  readonly #sibling: Warehouse;
  readonly #secret: string;
  readonly #startedAt: Date;
  #wakers: Array<() => void> = [];
  #fetchDue = false;
  #resent = 0;
  #fetched = 0;
  #closed = false;

  private constructor(
    o: PushStartOptions,
    parts: {
      inFlight: InFlight;
      server: CallbackServer;
      loader: TaskLoader;
      sibling: Warehouse;
      secret: string;
    },
  ) {
    this.#o = o;
    this.inFlight = parts.inFlight;
    this.#server = parts.server;
    this.#loader = parts.loader;
    this.#sibling = parts.sibling;
    this.#secret = parts.secret;
    this.#startedAt = o.now();
  }

  /** Opens the loader's connection and starts the callback server. */
  static async start(o: PushStartOptions): Promise<PushCollector> {
    const secret = o.secret ?? randomBytes(16).toString('base64url');
    if (!/^[A-Za-z0-9_-]{16,}$/.test(secret)) throw new Error('a callback secret is at least 16 characters of A-Z, a-z, 0-9, _ and -');
    const sibling = await o.wh.sibling();
    try {
      const inFlight = new InFlight();
      const loader = new TaskLoader(sibling, o.runId, o.now, { inFlight });
      inFlight.onRecorded = () => loader.kick();
      let wake = () => {};
      const server = await CallbackServer.start({
        host: o.host,
        port: o.port,
        secret,
        warehouseDir: o.wh.dir,
        runId: o.runId,
        pipeline: o.pipeline,
        maxBodyBytes: o.maxBodyBytes,
        maxUnzippedBytes: o.maxUnzippedBytes,
        inFlight,
        callback: o.callback,
        ...(o.onIgnored ? { onIgnored: o.onIgnored } : {}),
        ...(o.landing ? { landing: o.landing } : {}),
        onLanded: (c) => loader.landed(c),
        onPinged: (t) => {
          if (t.state === 'posted' || t.state === 'fetch_due') inFlight.move(t.taskId, 'fetch_due');
          wake();
        },
        now: o.now,
      });
      const collector = new PushCollector(o, { inFlight, server, loader, sibling, secret });
      wake = () => collector.#wake();
      return collector;
    } catch (err) {
      sibling.close();
      const code = (err as { code?: string }).code;
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
        throw new EtlError(
          'ETL_CONFIG_INVALID',
          `the callback server cannot listen on ${o.host}:${o.port} (${code}); nothing was posted. Choose another collection.listen (or --listen), or --collect pull.`,
          { cause: err, context: { stage: 'collect' } },
        );
      }
      throw err;
    }
  }

  /** Where the service sends callbacks (without the secret: safe to print). */
  get baseUrl(): string {
    return this.#o.publicUrl ?? this.#server.localUrl;
  }

  /** What the server has seen so far. */
  get counts() {
    return this.#server.counts;
  }

  /**
   * The callback fields for a task of `ep` (empty when its function has no callbacks,
   * so those tasks are pulled). Not part of the tag: a resumed run gets a new secret and
   * its tasks keep their tags.
   */
  callbackFields(ep: Endpoint): Record<string, string> {
    if (!ep.callbacks || !taskFunctionOf(ep)) return {};
    const url = `${this.baseUrl}/${this.#secret}/${this.#o.callback}?id=$id&tag=$tag`;
    return this.#o.callback === 'postback' ? { postback_url: url, postback_data: 'advanced' } : { pingback_url: url };
  }

  /** A POST of these tags is about to be sent (`specs`: their task bodies, in the same order, for what a postback must echo). */
  sending(ep: Endpoint, tags: readonly string[], specs?: readonly Record<string, unknown>[]): void {
    const fn = taskFunctionOf(ep);
    if (ep.callbacks && fn) this.inFlight.sending(tags, fn.get, specs?.map(echoOf));
  }

  /** The POST answered (before its ids are recorded); `ok` rows got a task id. */
  answered(tags: readonly string[], rows: readonly { tag: string; taskId: string | null; ok: boolean }[]): void {
    this.inFlight.answered(
      tags,
      rows.filter((r) => r.ok),
    );
  }

  /** The POST's task ids are committed in the tasks table. */
  recorded(ids: readonly (string | null)[]): void {
    this.inFlight.recorded(ids.filter((id): id is string => id !== null));
  }

  /** The POST failed without an answer. */
  abandoned(tags: readonly string[]): void {
    this.inFlight.abandoned(tags);
  }

  /**
   * Waits for the callbacks of every task this process posted, until all are loaded or
   * failed, the deadline passes, the run is aborted, or `callbackWaitMs` goes by without
   * any arriving. Then stops the server (later callbacks get 503, so their tasks join the
   * ready list for pull) and lets the loader finish.
   */
  async collect(o: PushWaitOptions): Promise<PushResult> {
    const now = () => this.#o.now().getTime();
    let lastCheck = now();
    let lastActivity = now();
    let activity = -1;
    let ended: PushEnd;
    for (;;) {
      const out = this.inFlight.outstandingCounts();
      const seen =
        this.inFlight.count('collected') +
        this.inFlight.count('failed') +
        this.#server.counts.landed +
        this.#server.counts.pinged +
        this.#fetched;
      if (seen !== activity) {
        activity = seen;
        lastActivity = now();
      }
      o.onProgress?.({ collected: this.#loader.totals.collected, failed: this.#loader.totals.failed, pending: out.outstanding });
      if (out.outstanding === 0) {
        ended = this.inFlight.count('load_failed') > 0 ? 'load_failed' : 'all';
        break;
      }
      // Nothing more to come: load what waits now rather than after the loader's linger.
      if (out.landed === out.outstanding) this.#loader.flush();
      if (o.signal?.aborted) {
        ended = 'interrupted';
        break;
      }
      if (now() >= o.deadlineAt) {
        ended = 'deadline';
        break;
      }
      if (this.#fetchDue) await this.#fetchQueued(o.client);
      if (now() - lastCheck >= o.checkEveryMs) {
        await this.#recover(
          o.client,
          this.#outstanding().map((t) => t.taskId),
        );
        if (this.inFlight.count('fetch_due') > 0) this.#fetchDue = true;
        lastCheck = now();
      }
      if (now() - lastActivity >= this.#o.callbackWaitMs) {
        ended = 'stalled';
        break;
      }
      if (!this.#fetchDue) await this.#wait(Math.max(1, Math.min(o.checkEveryMs, o.deadlineAt - now(), this.#o.callbackWaitMs)), o.signal);
    }
    await this.#server.close();
    await this.#loader.idle();
    const t = this.#loader.totals;
    return {
      ended,
      landed: this.#server.counts.landed,
      pinged: this.#server.counts.pinged,
      refused: { ...this.#server.counts.refused },
      collected: t.collected,
      failed: t.failed,
      rowsLoaded: t.rowsLoaded,
      tables: new Set(t.tables),
      resent: this.#resent,
      fetched: this.#fetched,
      pending: this.#outstanding().length,
      rereadPlain: [...t.rereadPlain],
      damaged: [...t.damaged],
      compactErrors: [...t.compactErrors],
    };
  }

  /** Stops the server, finishes loading what landed, closes the loader's connection. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#server.close();
      await this.#loader.idle();
    } finally {
      this.#sibling.close();
    }
  }

  /**
   * Resolves when the loader takes or settles something, a pingback queues a fetch, the
   * run is aborted, or after `ms`; at most every {@link LOOP_EVERY_MS}, since each turn of
   * the loop looks at every outstanding task and callbacks arrive thousands a second.
   */
  async #wait(ms: number, signal?: AbortSignal): Promise<void> {
    const started = performance.now();
    const woken = new Promise<void>((r) => this.#wakers.push(r));
    const onAbort = () => this.#wakers.forEach((w) => w());
    signal?.addEventListener('abort', onAbort, { once: true });
    await Promise.race([this.#loader.changed(ms), woken]);
    const early = LOOP_EVERY_MS - (performance.now() - started);
    if (early > 0 && !signal?.aborted) await new Promise((r) => setTimeout(r, Math.min(early, ms)));
    signal?.removeEventListener('abort', onAbort);
    this.#wakers = [];
  }

  #wake(): void {
    this.#fetchDue = true;
    for (const w of this.#wakers) w();
  }

  /** Tasks posted by this process, recorded, and neither loaded, failed nor given up by the loader. */
  #outstanding() {
    return this.inFlight.outstanding();
  }

  /** Looks up failed callbacks of outstanding tasks; resends them, or queues a fetch when resending will not help. */
  async #recover(client: ServiceClient, out: readonly string[]): Promise<void> {
    const apis = [...new Set(out.map((id) => this.inFlight.get(id)!.get!.api))];
    const failures = await failedCallbacks(client, apis, new Set(out), { from: this.#startedAt, now: this.#o.now() });
    const resend: string[] = [];
    for (const [id, f] of failures) {
      const t = this.inFlight.get(id)!;
      if (f.count <= t.callbackFailures) continue;
      t.callbackFailures = f.count;
      // A 413 is our own limit: sending the same body again cannot pass it.
      if (f.lastHttpCode === 413 || t.resends >= MAX_RESENDS) this.#queueFetch(id);
      else resend.push(id);
    }
    if (resend.length === 0) return;
    const r = await resendCallbacks(client, resend);
    for (const id of r.resent) this.inFlight.get(id)!.resends++;
    this.#resent += r.resent.length;
    for (const x of r.refused) this.#queueFetch(x.taskId);
  }

  /** A task still to come is fetched at the next turn (one already landed is left to the loader). */
  #queueFetch(id: string): void {
    const t = this.inFlight.get(id);
    if (t && (t.state === 'posted' || t.state === 'fetch_due')) this.inFlight.move(id, 'fetch_due');
    this.#fetchDue = true;
  }

  /** Fetches queued tasks (pinged, or whose callbacks keep failing) with task_get; the loader loads them. */
  async #fetchQueued(client: ServiceClient): Promise<void> {
    this.#fetchDue = false; // tasks not done yet are tried again at the next check
    for (const t of this.inFlight.inState('fetch_due')) {
      const id = t.taskId;
      const call = await client.call(t.get!, { taskId: id });
      const verdict = call.outcome.tasks[0];
      if (!verdict || NOT_READY.has(verdict.statusCode)) continue;
      // A postback may have landed it while the call was out: the loader has it already.
      if (this.inFlight.get(id)!.state !== 'fetch_due') continue;
      this.#fetched++;
      if (verdict.ok) this.#loader.fetched(id);
      else this.#loader.failed(id, verdict.statusCode, verdict.message);
    }
  }
}
