import type { Dispatcher } from 'undici';
import { aiPath, endpoint, endpointPath, type Endpoint, type PathParams } from '../catalog/index.js';
import { EtlError, isInterrupted } from '../errors.js';
import { attempt, requestHash, type Attempt, type Lander, type SentCall } from './attempt.js';
import type { ChargeRecord } from './charge.js';
import { envelopeSchema, type Envelope } from './envelope.js';
import { outcomeUnknown, statusError, v1ErrorDetail, type FailureContext } from './failures.js';
import { RateLimiter, type RateLimiterOptions } from './rate-limiter.js';
import { ServerClock } from './server-clock.js';
import { redact } from '../redact.js';
import { evaluateEnvelope, type CallOutcome } from './success.js';
import { validateBody, validateTasks } from './validate.js';
import {
  chat,
  embed,
  generateImage,
  type ChatCompletion,
  type ChatRequest,
  type Embeddings,
  type EmbeddingsRequest,
  type GeneratedImage,
  type ImageRequest,
} from './v1-calls.js';

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Called with every response body before it is parsed (raw landing + ledger). */
  land: Lander;
  /**
   * Awaited before every attempt at a charged POST is sent: the ledger's row of the call, with
   * its charge unknown until the answer's headers replace it (RawLanding.sending; a run also
   * keeps the call's id on the tasks it sends). A call whose answer never comes (a timeout, a
   * dropped connection, this process killed while it is out) so stays in the ledger, to be
   * priced once its tasks are found (ledgerWriter.estimateLost).
   */
  sending?: (call: SentCall) => Promise<void>;
  /** Called when an attempt `sending` announced made no connection, so nothing was sent: its row goes (RawLanding.notSent). */
  notSent?: (callId: string) => Promise<void>;
  /**
   * The paid answer already landed for a request (by its `requestHash`), if any: a `/v1` call
   * made with `reuseLanded` takes it instead of being sent (warehouse `landedAnswer`).
   */
  landedAnswer?: (requestHash: string, path: string) => Promise<LandedV1Answer | undefined>;
  dispatcher?: Dispatcher;
  limits?: RateLimiterOptions;
  /** Header and body timeout per attempt. */
  timeoutMs?: number;
  /** Timeout of an image generation attempt; never below the 180 s the spec advises. */
  imageTimeoutMs?: number;
  /** Attempts for calls that are safe to repeat (free reads, refused requests). */
  maxAttempts?: number;
  /** The most bytes one answer may hold (default `PIPELINE_MAX_RESPONSE_MB`, 256 MB); a longer one is cut and counts as no answer. */
  maxResponseBytes?: number;
  /** First backoff delay; doubles per attempt up to `maxBackoffMs`, with jitter. */
  backoffMs?: number;
  maxBackoffMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => Date;
  random?: () => number;
  /** Receives deprecation notes (legacy model aliases, v2 paths); defaults to `process.emitWarning`. */
  onWarning?: (message: string) => void;
}

export interface CallInput {
  /** The `{id}` of a task_get path. */
  taskId?: string;
  /** Other path placeholders, e.g. `{ country_code: 'us' }`. */
  params?: Record<string, string>;
  /** Tasks of a `/v3` POST body. */
  tasks?: unknown[];
  /** Ask for the AI-optimized response (`.ai` suffix, no extra charge) where the entry has one. */
  ai?: boolean;
}

export interface CallResult {
  endpoint: Endpoint;
  path: string;
  /** This client's id of the answered attempt (`X-Svc-Request-ID` sent): the call's ledger `call_id`. */
  callId: string;
  httpStatus: number;
  charge: ChargeRecord;
  envelope: Envelope;
  outcome: CallOutcome;
}

/** A successful `/v1` call: the parsed body and what it cost. */
export interface V1Result<T = unknown> {
  endpoint: Endpoint;
  httpStatus: number;
  charge: ChargeRecord;
  body: T;
  /** The call that bought the answer: an earlier one when the answer was landed already (`reuseLanded`). */
  callId?: string;
  /** True when the answer is one landed before (nothing was sent, nothing charged now). */
  reused?: boolean;
}

/** An answer landed before, as the warehouse reads it back (`landedAnswer`). */
export interface LandedV1Answer {
  callId: string;
  httpStatus: number;
  charge: ChargeRecord;
  body: string;
}

export interface V1CallOptions {
  /**
   * Before sending, look for the answer landed for the very same request (the client's
   * `landedAnswer`), and take it if there is one: for answers the tool keeps (a cluster's label,
   * a batch of embeddings), so a process killed between landing the paid answer and keeping what
   * it said does not buy it again on the rerun. Not for calls whose fresh answer is the point.
   */
  reuseLanded?: boolean;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Past a whole second of the service's clock, so that rounding never leaves it short. */
const SECOND_MARGIN_MS = 50;

/** The 180 s the spec advises as the least client timeout of image generation. */
export const IMAGE_TIMEOUT_FLOOR_MS = 180_000;

/**
 * The one way the tool talks to the service: Bearer auth, request validation against the
 * catalog, a rate limiter per family, the spec's success rule, and retries that never
 * re-buy a charged result. Every response is landed before it is parsed.
 */
export class ServiceClient {
  private readonly opts: Required<
    Omit<ClientOptions, 'dispatcher' | 'limits' | 'imageTimeoutMs' | 'sending' | 'notSent' | 'landedAnswer' | 'maxResponseBytes'>
  > &
    ClientOptions;
  readonly limiter: RateLimiter;
  /** The service's clock, from the `Date` header of its answers (server-clock.ts). */
  readonly serverClock = new ServerClock();

  constructor(opts: ClientOptions) {
    this.opts = {
      timeoutMs: 60_000,
      maxAttempts: 5,
      backoffMs: 500,
      maxBackoffMs: 30_000,
      sleep: defaultSleep,
      now: () => new Date(),
      random: Math.random,
      onWarning: (m) => process.emitWarning(m, 'DeprecationWarning'),
      ...opts,
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    };
    this.limiter = new RateLimiter(opts.limits);
  }

  /**
   * The service's now, as its answers tell it: a time its clock has surely reached (our clock
   * before any answer). Request times the spec bounds by "now" are checked and chosen by it.
   */
  serverNow(): Date {
    const local = this.opts.now().getTime();
    return new Date(this.serverClock.lower(local) ?? local);
  }

  /** Our clock's `local` on the service's clock, at the earliest (unchanged before any answer). */
  toServerTime(local: Date): Date {
    return new Date(this.serverClock.lower(local.getTime()) ?? local.getTime());
  }

  /**
   * The end of an `id_list` window that holds every task the service created until our clock read
   * `since`: a whole second of the service's clock (the spec's times have no fraction) that its
   * clock has passed ("not after now"). Waits as long as that takes (up to about two seconds: the
   * `Date` header has whole seconds) with `sleep`; before any answer has told the service's clock,
   * asks `appendix/user_data` (free) for it first.
   */
  async serverSecondAfter(since: Date, sleep: (ms: number) => Promise<void> = this.opts.sleep): Promise<Date> {
    if (!this.serverClock.known) await this.call(endpoint('appendix.user_data'));
    const lower = () => this.serverClock.lower(this.opts.now().getTime()) ?? this.opts.now().getTime();
    const upper = this.serverClock.upper(since.getTime()) ?? since.getTime();
    const wait = Math.ceil(upper / 1000) * 1000 - lower();
    if (wait > 0) await sleep(wait + SECOND_MARGIN_MS);
    return new Date(Math.floor(lower() / 1000) * 1000);
  }

  /** `live` or `sandbox`, from the key prefix; `unknown` for anything else. */
  get keyKind(): 'live' | 'sandbox' | 'unknown' {
    const k = this.opts.apiKey;
    return k.startsWith('svc_live_') ? 'live' : k.startsWith('svc_sandbox_') ? 'sandbox' : 'unknown';
  }

  /** Text chat completion (terra, luna; legacy aliases replaced with a warning). */
  chat(req: ChatRequest, o: V1CallOptions = {}): Promise<V1Result<ChatCompletion>> {
    return chat(this, req, o);
  }

  /** Embeddings as float32 vectors in input order (base64 on the wire unless asked otherwise). */
  embed(req: EmbeddingsRequest, o: V1CallOptions = {}): Promise<Embeddings> {
    return embed(this, req, o);
  }

  /** One image; size and tier checked before sending, retried once with a new request id. */
  generateImage(req: ImageRequest): Promise<GeneratedImage> {
    return generateImage(this, req);
  }

  private readonly unlistedWarned = new Set<string>();

  /** Warns once per endpoint and field about a request field the spec does not list (sent anyway). */
  private warnUnlisted(ep: Endpoint, field: string): void {
    const key = `${ep.id}\0${field}`;
    if (this.unlistedWarned.has(key)) return;
    this.unlistedWarned.add(key);
    this.opts.onWarning(
      `${ep.path}: field '${field}' is not listed by the spec for SERP tasks; it is sent as written (check its spelling if the service refuses it)`,
    );
  }

  /** Where deprecation notes go (the `/v1` helpers use it for legacy aliases). */
  warn(message: string): void {
    this.opts.onWarning(message);
  }

  /**
   * Calls one `/v3` endpoint. POST bodies are checked against the catalog before anything is sent.
   *
   * A rate limit is recognised in any body: HTTP 429; HTTP 200 with top-level 40202; HTTP 200
   * with every task echoed at 40202 (each retried whole, after the wait, by `exchange`). When only
   * some tasks of a POST come back at 40202, the others were taken (20100: created and charged)
   * and are kept; the refused ones were not created ("charged when the task is created") and are
   * posted again, alone, after the wait, until taken or the attempts run out. The answer then has
   * each task's latest verdict, and `outcome.tasks[i].callId` names the call that answered it.
   */
  async call(ep: Endpoint, input: CallInput = {}): Promise<CallResult> {
    if (ep.body === 'object') throw new Error(`${ep.id} takes one JSON object: use callV1`);
    const path = input.ai ? aiPath(ep, pathParams(input)) : endpointPath(ep, pathParams(input));
    const tasks = input.tasks ?? [];
    if (ep.method === 'POST') validateTasks(ep, tasks, { now: this.serverNow(), onUnlisted: (field) => this.warnUnlisted(ep, field) });
    let result = await this.callOnce(ep, path, tasks, input.ai === true);
    if (ep.method !== 'POST' || input.ai === true || tasks.length === 0) return result;
    // Where each sent task's verdict is in the answer (null: they cannot be told apart safely).
    const slots = answerSlots(tasks, result.envelope);
    if (slots === null) return result;
    const slotOf = new Map(slots.map((sent, slot) => [sent, slot]));
    for (let round = 1; ; round++) {
      const refused = (result.envelope.tasks ?? []).flatMap((t, slot) => (t.status_code === RATE_LIMITED_TASK ? [slots[slot]!] : []));
      if (refused.length === 0 || round >= this.opts.maxAttempts) return result;
      this.limiter.penalize(ep.family, result.retryAfterMs);
      await this.opts.sleep(this.backoff(round, result.retryAfterMs));
      const subset = refused.map((i) => tasks[i]);
      let again;
      try {
        again = await this.callOnce(ep, path, subset, false);
      } catch (err) {
        // The tasks taken before are created and charged: a re-post refused whole (still rate
        // limited, no connection, no balance, Ctrl-C) must not hide them, or they would be posted
        // again. The refused keep their 40202. Any other failure (no answer: the re-posted tasks
        // may exist) is thrown, and the run looks every task of the POST up by tag.
        if (err instanceof EtlError && NOTHING_CREATED.has(err.code)) return result;
        throw err;
      }
      const againSlots = answerSlots(subset, again.envelope);
      if (againSlots === null) return result; // cannot happen with a spec-true service; the refused stay refused
      result = mergeAnswers(
        result,
        again,
        againSlots.map((k) => slotOf.get(refused[k]!)!),
      );
    }
  }

  /** One `/v3` call as sent (its attempts by `exchange`), to its parsed answer. */
  private async callOnce(ep: Endpoint, path: string, tasks: unknown[], ai: boolean): Promise<CallResult & { retryAfterMs: number | null }> {
    const body = ep.method === 'POST' ? JSON.stringify(tasks) : undefined;
    const f = this.failure(ep, path, tasks);
    const repeatable = !ep.charged || ep.method === 'GET';
    for (let n = 1; ; n++) {
      const res = await this.exchange(ep, path, body, tasks.length, f);
      try {
        return { ...this.finishV3(f, res, ai && ep.mode === 'task_post'), retryAfterMs: res.retryAfterMs };
      } catch (err) {
        // A body cut short on the way (landed raw as received) is asked for again where asking is free.
        const garbled = err instanceof EtlError && err.context.body === 'not_envelope';
        if (!garbled || !repeatable || n >= this.opts.maxAttempts) throw err;
        await this.opts.sleep(this.backoff(n, null));
      }
    }
  }

  /** Calls one `/v1` endpoint with a JSON object body, validated against the catalog first. */
  async callV1<T = unknown>(ep: Endpoint, body: unknown, o: V1CallOptions = {}): Promise<V1Result<T>> {
    if (ep.body !== 'object') throw new Error(`${ep.id} is not a /v1 endpoint: use call`);
    validateBody(ep, body);
    const path = ep.path;
    const text = JSON.stringify(body);
    if (o.reuseLanded && this.opts.landedAnswer) {
      const hash = requestHash(this.opts, ep.method, path, text);
      const landed = hash === null ? undefined : await this.opts.landedAnswer(hash, path);
      if (landed) {
        try {
          return {
            endpoint: ep,
            httpStatus: landed.httpStatus,
            charge: landed.charge,
            body: JSON.parse(landed.body) as T,
            callId: landed.callId,
            reused: true,
          };
        } catch {
          // Landed as parsed JSON, so it parses; should it not, the answer is asked for below.
        }
      }
    }
    const f = this.failure(ep, path, []);
    const res = await this.exchange(ep, path, text, 1, f);
    const err = res.httpStatus >= 200 && res.httpStatus < 300 ? undefined : this.v1Failure(f, res);
    if (err) throw err;
    try {
      return { endpoint: ep, httpStatus: res.httpStatus, charge: res.charge, body: JSON.parse(res.text) as T, callId: res.callId };
    } catch (cause) {
      throw new EtlError(
        'ETL_SERVICE_ERROR',
        `${ep.method} ${path}: HTTP ${res.httpStatus} with a body that is not JSON; the body was landed raw (request id ${res.charge.requestId ?? res.callId}).`,
        { cause, context: { stage: 'client', path, requestId: res.charge.requestId ?? res.callId } },
      );
    }
  }

  /** Timeout of one attempt at this endpoint: at least 180 s for image generation. */
  timeoutFor(ep: Endpoint): number {
    if (ep.resultKind !== 'image_generation') return this.opts.timeoutMs;
    return Math.max(IMAGE_TIMEOUT_FLOOR_MS, this.opts.imageTimeoutMs ?? 0);
  }

  private failure(ep: Endpoint, path: string, tasks: unknown[]): FailureContext {
    const tags = tasks.map((t) => (t as { tag?: unknown } | null)?.tag).filter((t): t is string => typeof t === 'string');
    return { ep, path, apiKey: this.opts.apiKey, callIds: [], tags };
  }

  /**
   * Sends until an answer is final, as the spec's Errors rule 4 says: 429 and 5xx are retried
   * with exponential backoff (`Retry-After` honoured), and a 40202 (rate limit) inside an
   * HTTP 200 body is a 429. A refusal (429, 40202, no connection) created and charged
   * nothing, so any call is sent again after it. A 5xx or a lost answer may have been billed:
   * a free read is sent again; a `/v1` call is sent again after a 5xx only when its answer
   * says nothing was charged (`X-Svc-Charge-CNY` 0); a charged `/v3` POST is never sent
   * again here (the run stage looks its tasks up by tag first). Image generation waits and is
   * retried once with a new request id after any failure, 429 included, and never more.
   */
  private async exchange(
    ep: Endpoint,
    path: string,
    body: string | undefined,
    tasksSent: number,
    f: FailureContext,
  ): Promise<Extract<Attempt, { kind: 'answered' }>> {
    const repeatable = !ep.charged || ep.method === 'GET';
    const image = ep.resultKind === 'image_generation';
    const timeoutMs = this.timeoutFor(ep);
    // A charged POST is in the ledger before it goes: neither a lost answer nor a kill while it
    // is out leaves a charge the ledger does not know of.
    const writeAhead = ep.charged && ep.method === 'POST';
    const beforeSend = writeAhead
      ? (callId: string, at: Date) =>
          this.opts.sending?.({ callId, at, method: ep.method, path, endpointId: ep.id, tasksSent, tags: f.tags }) ?? Promise.resolve()
      : undefined;
    let imageRetried = false;
    // An image attempt that may have been charged (no answer, or a 5xx) before the one waiting.
    let imageUnsure = false;
    for (let n = 1; ; n++) {
      let a: Attempt;
      try {
        a = await this.limiter.schedule(
          ep.family,
          (answered) => attempt(this.opts, ep, path, body, tasksSent, timeoutMs, answered, beforeSend),
          (r) => r.kind === 'answered' && (r.httpStatus === 429 || rateLimitedIn200(r)),
        );
      } catch (err) {
        // Interrupted (Ctrl-C) while waiting for the rate limit: this attempt was never sent, and
        // every attempt before it was refused or free, except an image attempt left unsure.
        if (!isInterrupted(err)) throw err;
        if (imageUnsure) throw outcomeUnknown(f, 'interrupted before its one retry');
        throw new EtlError(
          'ETL_INTERRUPTED',
          `${ep.method} ${path}: interrupted while waiting for the rate limit, so it was not sent; nothing was created or charged.`,
          { context: { stage: 'client', path }, cause: err },
        );
      }
      f.callIds.push(a.callId);
      if (a.kind === 'answered' && a.sentAt && a.receivedAt)
        this.serverClock.observe(a.serverDate ?? undefined, a.sentAt.getTime(), a.receivedAt.getTime());
      if (a.kind === 'not_sent' && writeAhead) await this.opts.notSent?.(a.callId);
      const more = n < this.opts.maxAttempts;
      let retry: boolean;
      if (a.kind === 'not_sent') {
        if (!more)
          throw new EtlError(
            'ETL_SERVICE_UNAVAILABLE',
            `${ep.method} ${this.opts.baseUrl}${path}: could not connect after ${n} attempts (${redact(errorText(a.error), [this.opts.apiKey])}), so nothing was sent; check SVC_BASE_URL and the network, then run again.`,
            { context: { stage: 'client', path } },
          );
        retry = true;
      } else if (image) {
        // The spec's rule for image generation: wait, then once more with a new request id.
        const failed = a.kind === 'lost' || a.httpStatus === 429 || a.httpStatus >= 500;
        imageUnsure = a.kind === 'lost' || a.httpStatus >= 500;
        if (a.kind === 'lost' && imageRetried)
          throw outcomeUnknown(f, `sent but got no answer (${redact(errorText(a.error), [this.opts.apiKey])})`);
        if (a.kind === 'answered' && a.httpStatus === 429) this.limiter.penalize(ep.family, a.retryAfterMs);
        retry = failed && !imageRetried;
        imageRetried ||= retry;
        if (!retry && a.kind === 'answered') return a;
      } else if (a.kind === 'lost') {
        const why = `sent but got no answer (${redact(errorText(a.error), [this.opts.apiKey])})`;
        if (!repeatable) throw outcomeUnknown(f, why);
        if (!more)
          throw new EtlError('ETL_TIMEOUT', `${ep.method} ${path}: ${why} after ${n} attempts; running again can help.`, {
            context: { stage: 'client', path },
          });
        retry = true;
      } else {
        if (a.httpStatus === 429 || rateLimitedIn200(a)) {
          this.limiter.penalize(ep.family, a.retryAfterMs);
          retry = more; // a refusal created and charged nothing
        } else if (
          a.httpStatus >= 500 &&
          (repeatable || (ep.body === 'object' && a.charge.chargeCny !== null && Number(a.charge.chargeCny) === 0))
        ) {
          retry = more;
        } else {
          retry = false;
        }
        if (!retry) return a;
      }
      await this.opts.sleep(this.backoff(n, a.kind === 'answered' ? a.retryAfterMs : null));
    }
  }

  private backoff(attempt: number, retryAfterMs: number | null): number {
    const exp = Math.min(this.opts.maxBackoffMs, this.opts.backoffMs * 2 ** (attempt - 1));
    const jittered = exp / 2 + this.opts.random() * (exp / 2);
    return Math.max(jittered, retryAfterMs ?? 0);
  }

  private finishV3(f: FailureContext, res: Extract<Attempt, { kind: 'answered' }>, aiTaskCreation = false): CallResult {
    const { ep, path } = f;
    f.charge = res.charge;
    const known = statusError(f, res.httpStatus, '', res.location ?? null);
    if (known && res.httpStatus !== 429) throw known;
    if (res.httpStatus >= 500 && ep.charged && ep.method === 'POST') throw outcomeUnknown(f, `HTTP ${res.httpStatus}`, res.httpStatus);
    if (rateLimitedIn200(res)) {
      throw new EtlError(
        'ETL_RATE_LIMITED',
        `${ep.method} ${path}: still rate limited after retries (status 40202 in an HTTP ${res.httpStatus} answer); nothing was created or charged, and running again later helps.`,
        { context: { stage: 'client', path, requestId: res.charge.requestId ?? undefined } },
      );
    }
    // httpStatus: callers tell a list the service does not serve (404) or failed to serve (5xx) from other failures.
    const ctx = { stage: 'client', path, requestId: res.charge.requestId ?? undefined, httpStatus: res.httpStatus };
    const code = res.httpStatus === 429 ? 'ETL_RATE_LIMITED' : res.httpStatus >= 500 ? 'ETL_SERVICE_UNAVAILABLE' : 'ETL_SERVICE_ERROR';
    let envelope: Envelope;
    try {
      envelope = envelopeSchema.parse(JSON.parse(res.text));
    } catch (err) {
      throw new EtlError(
        code,
        `${ep.method} ${path}: HTTP ${res.httpStatus} with a body that is not a service envelope; the body was landed raw (request id ${res.charge.requestId ?? 'none'}).`,
        { context: { ...ctx, body: 'not_envelope' }, cause: err },
      );
    }
    const outcome = evaluateEnvelope(res.httpStatus, envelope, { aiTaskCreation });
    if (!outcome.httpOk || !outcome.topLevelOk) {
      throw new EtlError(
        code,
        redact(`${ep.method} ${path}: HTTP ${res.httpStatus}, status ${envelope.status_code} ${envelope.status_message ?? ''}`.trim(), [
          this.opts.apiKey,
        ]),
        { context: ctx },
      );
    }
    return { endpoint: ep, path, callId: res.callId, httpStatus: res.httpStatus, charge: res.charge, envelope, outcome };
  }

  private v1Failure(f: FailureContext, res: Extract<Attempt, { kind: 'answered' }>): EtlError {
    f.charge = res.charge;
    const detail = v1ErrorDetail(res.text);
    const known = statusError(f, res.httpStatus, detail, res.location ?? null);
    if (known) return known;
    if (res.httpStatus >= 500)
      return outcomeUnknown(f, `HTTP ${res.httpStatus}${detail ? ` (${redact(detail, [this.opts.apiKey])})` : ''}`, res.httpStatus);
    const code = res.httpStatus === 400 ? 'ETL_REQUEST_INVALID' : 'ETL_SERVICE_ERROR';
    return new EtlError(
      code,
      redact(`${f.ep.method} ${f.path}: the service refused the body (HTTP ${res.httpStatus}${detail ? `: ${detail}` : ''})`, [
        this.opts.apiKey,
      ]),
      {
        context: { stage: 'client', path: f.path, requestId: res.charge.requestId ?? res.callId },
      },
    );
  }
}

/** Failures of a call that created nothing (the call was refused whole, or never sent). */
const NOTHING_CREATED = new Set(['ETL_RATE_LIMITED', 'ETL_SERVICE_UNAVAILABLE', 'ETL_PAYMENT_REQUIRED', 'ETL_INTERRUPTED']);

/** The task status of a rate-limit refusal (not created, not charged). */
export const RATE_LIMITED_TASK = 40202;

const TASK_40202 = /"status_code"\s*:\s*40202\b/;

/**
 * A rate-limit refusal inside an HTTP 200 answer: top-level `status_code` 40202, or every task
 * echoed with task status 40202 (nothing taken). Most answers hold no 40202 at all: only those
 * are parsed here.
 */
export function rateLimitedIn200(a: { httpStatus: number; text: string }): boolean {
  if (a.httpStatus !== 200 || !TASK_40202.test(a.text)) return false;
  try {
    const e = JSON.parse(a.text) as { status_code?: unknown; tasks?: unknown };
    if (e.status_code === RATE_LIMITED_TASK) return true;
    return (
      e.status_code === 20000 &&
      Array.isArray(e.tasks) &&
      e.tasks.length > 0 &&
      e.tasks.every((t) => (t as { status_code?: unknown } | null)?.status_code === RATE_LIMITED_TASK)
    );
  } catch {
    return false;
  }
}

/**
 * For each task of an answer, the index of the sent task it answers, or null when they cannot be
 * told apart safely: by the echoed `tag` when every task echoes a distinct one of ours, else by
 * position when the answer holds as many tasks as were sent.
 */
export function answerSlots(sent: readonly unknown[], envelope: Envelope): number[] | null {
  const got = envelope.tasks ?? [];
  const tagOf = (t: unknown) => {
    const tag = (t as { tag?: unknown } | null)?.tag;
    return typeof tag === 'string' ? tag : undefined;
  };
  const byTag = new Map<string, number>();
  sent.forEach((t, i) => {
    const tag = tagOf(t);
    if (tag !== undefined) byTag.set(tag, byTag.has(tag) ? -1 : i);
  });
  const echoed = got.map((t) => byTag.get(tagOf(t.data) ?? '\0') ?? -1);
  if (echoed.length > 0 && echoed.every((i) => i >= 0) && new Set(echoed).size === echoed.length) return echoed;
  return got.length === sent.length ? got.map((_, k) => k) : null;
}

/**
 * An answer with the verdicts of a later call on refused tasks put in their places (`targets[j]`:
 * the slot in `prev`'s answer of the later answer's task j); each verdict names the call that gave it.
 */
function mergeAnswers(
  prev: CallResult & { retryAfterMs: number | null },
  again: CallResult & { retryAfterMs: number | null },
  targets: readonly number[],
): CallResult & { retryAfterMs: number | null } {
  const tasks = [...(prev.envelope.tasks ?? [])];
  const verdicts = prev.outcome.tasks.map((t) => ({ ...t, callId: t.callId ?? prev.callId }));
  (again.envelope.tasks ?? []).forEach((t, j) => {
    const slot = targets[j]!;
    tasks[slot] = t;
    verdicts[slot] = { ...again.outcome.tasks[j]!, index: slot, callId: again.callId };
  });
  const failedTasks = verdicts.filter((t) => !t.ok).length;
  return {
    ...prev,
    envelope: { ...prev.envelope, tasks, tasks_error: failedTasks },
    outcome: { ...prev.outcome, tasks: verdicts, failedTasks, ok: prev.outcome.httpOk && prev.outcome.topLevelOk && failedTasks === 0 },
    retryAfterMs: again.retryAfterMs,
  };
}

function pathParams(input: CallInput): PathParams | undefined {
  if (input.params) return input.taskId === undefined ? input.params : { ...input.params, id: input.taskId };
  return input.taskId;
}

function errorText(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return [e?.code, e?.message].filter(Boolean).join(': ') || String(err);
}
