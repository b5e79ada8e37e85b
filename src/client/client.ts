import { aiPath, endpoint, endpointPath, type Endpoint, type PathParams } from '../catalog/index.js';
import { EtlError } from '../errors.js';
import { answerSlots, mergeAnswers, RATE_LIMITED_TASK } from './answers.js';
import { requestHash } from './attempt.js';
import type { CallInput, CallResult, ClientOptions, ResolvedClientOptions, V1CallOptions, V1Result } from './client-types.js';
import { exchange, type ExchangeClient } from './exchange.js';
import type { FailureContext } from './failures.js';
import { RateLimiter } from './rate-limiter.js';
import { backoffDelay, createdNothing, endpointRetry, RETRY_POLICY } from './retry-policy.js';
import { ServerClock } from './server-clock.js';
import { validateBody, validateTasks } from './validate.js';
import { finishV3, v1Failure } from './v3-answer.js';
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

export * from './client-types.js';
export { answerSlots, rateLimitedIn200, RATE_LIMITED_TASK } from './answers.js';
export { RETRY_POLICY } from './retry-policy.js';

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
  private readonly opts: ResolvedClientOptions;
  readonly limiter: RateLimiter;
  /** The service's clock, from the `Date` header of its answers (server-clock.ts). */
  readonly serverClock = new ServerClock();

  constructor(opts: ClientOptions) {
    this.opts = {
      timeoutMs: 60_000,
      maxAttempts: RETRY_POLICY.maxAttempts,
      backoffMs: RETRY_POLICY.backoffMs,
      maxBackoffMs: RETRY_POLICY.maxBackoffMs,
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
      await this.opts.sleep(backoffDelay(this.opts, round, result.retryAfterMs));
      const subset = refused.map((i) => tasks[i]);
      let again;
      try {
        again = await this.callOnce(ep, path, subset, false);
      } catch (err) {
        // The tasks taken before are created and charged: a re-post refused whole (still rate
        // limited, no connection, no balance, Ctrl-C) must not hide them, or they would be posted
        // again. The refused keep their 40202. Any other failure (no answer: the re-posted tasks
        // may exist) is thrown, and the run looks every task of the POST up by tag.
        if (err instanceof EtlError && createdNothing(err.code)) return result;
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
    const { repeatable } = endpointRetry(ep);
    for (let n = 1; ; n++) {
      const res = await exchange(this.exchanger, ep, path, body, tasks.length, f);
      try {
        return { ...finishV3(f, res, ai && ep.mode === 'task_post'), retryAfterMs: res.retryAfterMs };
      } catch (err) {
        // A body cut short on the way (landed raw as received) is asked for again where asking is free.
        const garbled = err instanceof EtlError && err.context.body === 'not_envelope';
        if (!garbled || !repeatable || n >= this.opts.maxAttempts) throw err;
        await this.opts.sleep(backoffDelay(this.opts, n, null));
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
    const res = await exchange(this.exchanger, ep, path, text, 1, f);
    const err = res.httpStatus >= 200 && res.httpStatus < 300 ? undefined : v1Failure(f, res);
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

  /** What an exchange needs of this client (exchange.ts). */
  private get exchanger(): ExchangeClient {
    return { opts: this.opts, limiter: this.limiter, serverClock: this.serverClock, timeoutFor: (ep) => this.timeoutFor(ep) };
  }

  private failure(ep: Endpoint, path: string, tasks: unknown[]): FailureContext {
    const tags = tasks.map((t) => (t as { tag?: unknown } | null)?.tag).filter((t): t is string => typeof t === 'string');
    return { ep, path, apiKey: this.opts.apiKey, callIds: [], tags };
  }
}

function pathParams(input: CallInput): PathParams | undefined {
  if (input.params) return input.taskId === undefined ? input.params : { ...input.params, id: input.taskId };
  return input.taskId;
}
