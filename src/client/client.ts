import { randomUUID } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import { endpointPath, type Endpoint } from '../catalog/index.js';
import { EtlError } from '../errors.js';
import { readCharge, type ChargeRecord } from './charge.js';
import { envelopeSchema, type Envelope } from './envelope.js';
import { RateLimiter, type RateLimiterOptions } from './rate-limiter.js';
import { redact } from './redact.js';
import { evaluateEnvelope, type CallOutcome } from './success.js';
import { validateTasks } from './validate.js';

/** A response exactly as it arrived, handed to the landing stage before anything parses it. */
export interface RawResponse {
  callId: string;
  receivedAt: Date;
  method: 'GET' | 'POST';
  path: string;
  endpointId: string;
  httpStatus: number;
  charge: ChargeRecord;
  /** Tasks sent in the body (0 for GET). */
  tasksSent: number;
  body: string;
}

/** Persists a raw response durably; the client waits for it before parsing. */
export type Lander = (raw: RawResponse) => Promise<void>;

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Called with every response body before it is parsed (raw landing + ledger). */
  land: Lander;
  dispatcher?: Dispatcher;
  limits?: RateLimiterOptions;
  /** Header and body timeout per attempt. */
  timeoutMs?: number;
  /** Attempts for calls that are safe to repeat (free reads, refused requests). */
  maxAttempts?: number;
  /** First backoff delay; doubles per attempt up to `maxBackoffMs`, with jitter. */
  backoffMs?: number;
  maxBackoffMs?: number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => Date;
  random?: () => number;
}

export interface CallResult {
  endpoint: Endpoint;
  path: string;
  httpStatus: number;
  charge: ChargeRecord;
  envelope: Envelope;
  outcome: CallOutcome;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The one way the tool talks to the service: Bearer auth, request validation against the
 * catalog, a rate limiter per family, the spec's success rule, and retries that never
 * re-buy a charged result. Every response is landed before it is parsed.
 */
export class ServiceClient {
  private readonly opts: Required<Omit<ClientOptions, 'dispatcher' | 'limits'>> & ClientOptions;
  readonly limiter: RateLimiter;

  constructor(opts: ClientOptions) {
    this.opts = {
      timeoutMs: 60_000,
      maxAttempts: 5,
      backoffMs: 500,
      maxBackoffMs: 30_000,
      sleep: defaultSleep,
      now: () => new Date(),
      random: Math.random,
      ...opts,
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    };
    this.limiter = new RateLimiter(opts.limits);
  }

  /** Calls one endpoint. POST bodies are checked against the catalog before anything is sent. */
  async call(ep: Endpoint, input: { taskId?: string; tasks?: unknown[] } = {}): Promise<CallResult> {
    const path = endpointPath(ep, input.taskId);
    let body: string | undefined;
    if (ep.method === 'POST') {
      const tasks = input.tasks ?? [];
      validateTasks(ep, tasks);
      body = JSON.stringify(tasks);
    }
    // A charged POST that reached the server may have created (and billed) tasks: only a
    // response that proves refusal (429) may be repeated.
    const repeatable = !(ep.charged && ep.method === 'POST');
    for (let attempt = 1; ; attempt++) {
      const res = await this.limiter.schedule(ep.family, () => this.send(ep, path, body, input.tasks?.length ?? 0, repeatable));
      const retry = this.shouldRetry(res.httpStatus, repeatable) && attempt < this.opts.maxAttempts;
      if (retry) {
        await this.opts.sleep(this.backoff(attempt, res.retryAfter));
        continue;
      }
      return this.finish(ep, path, res);
    }
  }

  /** 429 refuses a call, and -1 means no connection was made: both are safe to repeat. */
  private shouldRetry(status: number, repeatable: boolean): boolean {
    if (status === 429 || status === -1) return true;
    return status >= 500 && repeatable;
  }

  private backoff(attempt: number, retryAfterMs: number | null): number {
    const exp = Math.min(this.opts.maxBackoffMs, this.opts.backoffMs * 2 ** (attempt - 1));
    const jittered = exp / 2 + this.opts.random() * (exp / 2);
    return Math.max(jittered, retryAfterMs ?? 0);
  }

  private async send(
    ep: Endpoint,
    path: string,
    body: string | undefined,
    tasksSent: number,
    repeatable: boolean,
  ): Promise<{ httpStatus: number; charge: ChargeRecord; text: string; retryAfter: number | null }> {
    const callId = randomUUID();
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.opts.apiKey}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Dispatcher.ResponseData;
    let text: string;
    try {
      res = await request(this.opts.baseUrl + path, {
        method: ep.method,
        headers,
        body,
        dispatcher: this.opts.dispatcher,
        headersTimeout: this.opts.timeoutMs,
        bodyTimeout: this.opts.timeoutMs,
      });
      text = await res.body.text();
    } catch (err) {
      // A connection that never opened carried no request: safe to try again, even a POST.
      if (repeatable || neverSent(err)) return { httpStatus: -1, charge: emptyCharge(), text: '', retryAfter: null };
      throw new EtlError(
        'ETL_OUTCOME_UNKNOWN',
        `${ep.method} ${path} was sent but got no answer (${redact(errorText(err), [this.opts.apiKey])}); ` +
          'the service may have created and charged these tasks, so they were not re-sent. ' +
          "They stay in the tasks table as 'planned' with their tags, which the service echoes, so they can be matched before anything is posted again.",
        { context: { stage: 'client', path } },
      );
    }
    const charge = readCharge(res.headers);
    await this.opts.land({
      callId,
      receivedAt: this.opts.now(),
      method: ep.method,
      path,
      endpointId: ep.id,
      httpStatus: res.statusCode,
      charge,
      tasksSent,
      body: text,
    });
    return { httpStatus: res.statusCode, charge, text, retryAfter: retryAfterMs(res.headers['retry-after']) };
  }

  private finish(ep: Endpoint, path: string, res: { httpStatus: number; charge: ChargeRecord; text: string }): CallResult {
    const ctx = { stage: 'client', path, requestId: res.charge.requestId ?? undefined };
    if (res.httpStatus === -1) {
      throw new EtlError('ETL_SERVICE_UNAVAILABLE', `${ep.method} ${this.opts.baseUrl}${path}: could not connect after ${this.opts.maxAttempts} attempts, so nothing was sent; check SVC_BASE_URL and the network, then run again.`, { retryable: true, context: ctx });
    }
    if (res.httpStatus === 401) {
      throw new EtlError('ETL_AUTH', 'the service refused the API key (HTTP 401). Check SVC_API_KEY: it must be a valid svc_live_ or svc_sandbox_ key for this base address.', { context: ctx });
    }
    if (res.httpStatus === 402) {
      throw new EtlError('ETL_PAYMENT_REQUIRED', 'the account balance cannot cover this call (HTTP 402). Top up the balance, then run again to continue.', { context: ctx });
    }
    if (res.httpStatus >= 500 && ep.charged && ep.method === 'POST') {
      throw new EtlError(
        'ETL_OUTCOME_UNKNOWN',
        `${ep.method} ${path}: HTTP ${res.httpStatus} (request id ${res.charge.requestId ?? 'none'}); the service may still have created and charged these tasks, so they were not re-sent. ` +
          "They stay in the tasks table as 'planned' with their tags, which the service echoes, so they can be matched before anything is posted again.",
        { context: ctx },
      );
    }
    let envelope: Envelope;
    try {
      envelope = envelopeSchema.parse(JSON.parse(res.text));
    } catch (err) {
      const code = res.httpStatus === 429 ? 'ETL_RATE_LIMITED' : res.httpStatus >= 500 ? 'ETL_SERVICE_UNAVAILABLE' : 'ETL_SERVICE_ERROR';
      throw new EtlError(code, `${ep.method} ${path}: HTTP ${res.httpStatus} with a body that is not a service envelope; the body was landed raw (request id ${res.charge.requestId ?? 'none'}).`, { context: ctx, cause: err, retryable: code !== 'ETL_SERVICE_ERROR' });
    }
    const outcome = evaluateEnvelope(res.httpStatus, envelope);
    if (!outcome.httpOk || !outcome.topLevelOk) {
      const code = res.httpStatus === 429 ? 'ETL_RATE_LIMITED' : res.httpStatus >= 500 ? 'ETL_SERVICE_UNAVAILABLE' : 'ETL_SERVICE_ERROR';
      throw new EtlError(code, `${ep.method} ${path}: HTTP ${res.httpStatus}, status ${envelope.status_code} ${envelope.status_message ?? ''}`.trim(), { context: ctx, retryable: code !== 'ETL_SERVICE_ERROR' });
    }
    return { endpoint: ep, path, httpStatus: res.httpStatus, charge: res.charge, envelope, outcome };
  }
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** True when the error proves the request never left this machine (no connection was made). */
function neverSent(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && NOT_SENT_CODES.has(e.code)) return true;
  }
  return false;
}

function errorText(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return [e?.code, e?.message].filter(Boolean).join(': ') || String(err);
}

function emptyCharge(): ChargeRecord {
  return { requestId: null, chargeCny: null, costUsd: null, balanceCny: null };
}

function retryAfterMs(v: string | string[] | undefined): number | null {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return null;
  const secs = Number(s);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(s);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}
