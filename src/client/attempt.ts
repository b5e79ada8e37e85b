import { createHash, randomUUID } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import type { Endpoint } from '../catalog/index.js';
import type { ErrorCode } from '../errors.js';
import { readCharge, type ChargeRecord } from './charge.js';
import { RETRY_POLICY } from './retry-policy.js';

/** A response exactly as it arrived, handed to the landing stage before anything parses it. */
export interface RawResponse {
  callId: string;
  receivedAt: Date;
  method: 'GET' | 'POST';
  path: string;
  endpointId: string;
  httpStatus: number;
  charge: ChargeRecord;
  /** Tasks sent in the body (0 for GET, 1 for a `/v1` body). */
  tasksSent: number;
  body: string;
  /** What was asked, as {@link requestHash} names it; null for a call without a body (a GET). */
  requestHash?: string | null;
}

/**
 * The name of a request: a SHA-256 of the key's kind (live or sandbox, never the key), the
 * method, the address and the exact body sent. Two calls with the same name asked the same
 * question of the same service; a paid answer landed under it can be used again instead of
 * buying it twice (ServiceClient.callV1 `reuseLanded`). Null for a call without a body.
 */
export function requestHash(o: { baseUrl: string; apiKey: string }, method: string, path: string, body: string | undefined): string | null {
  if (body === undefined) return null;
  const kind = o.apiKey.startsWith('svc_live_') ? 'live' : o.apiKey.startsWith('svc_sandbox_') ? 'sandbox' : 'unknown';
  return createHash('sha256').update(`${kind} ${method} ${o.baseUrl}${path}\n`).update(body).digest('hex');
}

/** Persists a raw response durably; the client waits for it before parsing. */
export type Lander = (raw: RawResponse) => Promise<void>;

/**
 * A charged POST about to be sent: the service may charge it, and only its answer says how much.
 * Its ledger row is written before it goes (ServiceClient's `sending`), so that a process killed
 * while it is out, or an answer lost on the way, leaves the call in the ledger.
 */
export interface SentCall {
  callId: string;
  /** When it is sent: the service charges a call when it takes it, so the charge is placed here among the calls. */
  at: Date;
  method: 'GET' | 'POST';
  path: string;
  endpointId: string;
  tasksSent: number;
  /** The `tag` of each task in its body: the run keeps the call's id on those tasks (`tasks.post_call_id`). */
  tags: readonly string[];
}

/** What one HTTP exchange came to. `callId` is also sent as `X-Svc-Request-ID`. */
export type Attempt =
  | {
      kind: 'answered';
      callId: string;
      httpStatus: number;
      charge: ChargeRecord;
      text: string;
      retryAfterMs: number | null;
      /** Where a redirect (3xx) pointed, never followed. */
      location?: string | null;
      /** The service's `Date` header, and when the request left and the answer arrived (our clock): the service's clock (server-clock.ts). */
      serverDate?: string | null;
      sentAt?: Date;
      receivedAt?: Date;
    }
  /** No connection was made: nothing reached the service. */
  | { kind: 'not_sent'; callId: string; error: unknown }
  /** The request may have reached the service, but no complete answer came back. */
  | { kind: 'lost'; callId: string; error: unknown; sentAt: Date };

export interface AttemptOptions {
  baseUrl: string;
  apiKey: string;
  land: Lander;
  dispatcher?: Dispatcher;
  timeoutMs: number;
  now: () => Date;
  /** The most bytes one answer may hold (maxResponseBytes); a longer one is cut and counts as no answer. */
  maxResponseBytes?: number;
}

/**
 * The most bytes one answer may hold: `PIPELINE_MAX_RESPONSE_MB`, default 256 MB. The largest
 * answers the spec describes (a depth-700 SERP, 1,000 backlinks, a batch of embeddings, an image
 * in base64) are tens of MB; an answer held in memory costs several times its size. A body that
 * never ends (a broken proxy, a hostile service) would otherwise fill the machine's memory, and
 * the run could not stop "after the calls in flight".
 */
export function maxResponseBytes(env: NodeJS.ProcessEnv = process.env): number {
  const mb = Number(env.PIPELINE_MAX_RESPONSE_MB);
  return (env.PIPELINE_MAX_RESPONSE_MB !== undefined && Number.isFinite(mb) && mb > 0 ? mb : 256) * 2 ** 20;
}

/**
 * How long one whole answer may take, in attempt timeouts: the timeout bounds the wait for the
 * headers and each pause in the body, so a body that keeps trickling would never end without this.
 */
export const WHOLE_ANSWER_TIMEOUTS = 5;

/** An answer cut short by this side: longer than maxResponseBytes, or not whole in time. */
export class AnswerCut extends Error {
  readonly code: ErrorCode = 'ETL_ANSWER_CUT';
}

/** The body as UTF-8 (a leading BOM skipped, as undici's `text()` does), refused past `max` bytes. */
async function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of body as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > max) {
      body.destroy();
      throw new AnswerCut(
        `the answer passed ${Math.round(max / 2 ** 20)} MB and was cut there (PIPELINE_MAX_RESPONSE_MB raises the limit)`,
      );
    }
    chunks.push(c);
  }
  const b = Buffer.concat(chunks, n);
  return b.toString('utf8', b.length > 2 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0);
}

/**
 * One HTTP exchange: Bearer auth, `Content-Type` on every body, a fresh client request id
 * (`X-Svc-Request-ID`, so a retried image call carries a new identifier as the spec
 * advises), and the body landed before the caller parses it.
 */
export async function attempt(
  o: AttemptOptions,
  ep: Endpoint,
  path: string,
  body: string | undefined,
  tasksSent: number,
  timeoutMs = o.timeoutMs,
  /** Called the moment the whole answer is in, before it is landed (the rate limiter counts from here). */
  onAnswered: () => void = () => {},
  /** Awaited with the attempt's id and time before anything is sent (a charged POST's write-ahead); if it throws, nothing is sent. */
  beforeSend?: (callId: string, sentAt: Date) => Promise<void>,
): Promise<Attempt> {
  const callId = randomUUID();
  const headers = requestHeaders(o.apiKey, callId, body);
  let res: Dispatcher.ResponseData;
  let text: string;
  const sentAt = o.now();
  await beforeSend?.(callId, sentAt);
  const whole = new AbortController();
  const wholeMs = timeoutMs * WHOLE_ANSWER_TIMEOUTS;
  const timer = setTimeout(
    () =>
      whole.abort(
        new AnswerCut(
          `the answer was not whole after ${Number((wholeMs / 1000).toFixed(1))} s, ${WHOLE_ANSWER_TIMEOUTS} times the call timeout`,
        ),
      ),
    wholeMs,
  );
  try {
    res = await request(o.baseUrl + path, {
      method: ep.method,
      headers,
      body,
      dispatcher: o.dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: whole.signal,
    });
    text = await readCapped(res.body, o.maxResponseBytes ?? maxResponseBytes());
  } catch (error) {
    const e = whole.signal.aborted ? whole.signal.reason : error;
    return neverSent(e) ? { kind: 'not_sent', callId, error: e } : { kind: 'lost', callId, error: e, sentAt };
  } finally {
    clearTimeout(timer);
  }
  onAnswered();
  const charge = readCharge(res.headers);
  const receivedAt = o.now();
  await o.land({
    callId,
    receivedAt,
    method: ep.method,
    path,
    endpointId: ep.id,
    httpStatus: res.statusCode,
    charge,
    tasksSent,
    // A body that echoes the key (some error bodies quote the Authorization header) must not
    // carry it into the warehouse; result data never contains it, so nothing paid for changes.
    body: o.apiKey.length >= 8 && text.includes(o.apiKey) ? text.split(o.apiKey).join('***') : text,
    requestHash: requestHash(o, ep.method, path, body),
  });
  return {
    kind: 'answered',
    callId,
    httpStatus: res.statusCode,
    charge,
    text,
    retryAfterMs: retryAfterMs(res.headers['retry-after'], o.now()),
    location: res.statusCode >= 300 && res.statusCode < 400 ? redirectTarget(res.headers.location, o.baseUrl) : null,
    serverDate: typeof res.headers.date === 'string' ? res.headers.date : null,
    sentAt,
    receivedAt,
  };
}

/** Bearer auth, JSON accepted, the attempt's own request id, and `Content-Type` on every body. */
function requestHeaders(apiKey: string, callId: string, body: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${apiKey}`,
    accept: 'application/json',
    'x-svc-request-id': callId,
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return headers;
}

/** True when the error proves the request never left this machine (no connection was made). */
export function neverSent(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && RETRY_POLICY.notSentErrorCodes.includes(e.code)) return true;
  }
  return false;
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date. */
export function retryAfterMs(v: string | string[] | undefined, now: Date): number | null {
  const s = Array.isArray(v) ? v[0] : v;
  if (!s) return null;
  const secs = Number(s);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(s);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/** A redirect's target as shown in an error: its origin and path (no query, which may carry anything), or null. */
function redirectTarget(location: string | string[] | undefined, base: string): string | null {
  const l = Array.isArray(location) ? location[0] : location;
  if (!l) return null;
  try {
    const u = new URL(l, base);
    return `${u.origin}${u.pathname}`.slice(0, 200);
  } catch {
    return null;
  }
}
