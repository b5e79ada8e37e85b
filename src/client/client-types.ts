import type { Dispatcher } from 'undici';
import type { Endpoint } from '../catalog/index.js';
import type { Lander, SentCall } from './attempt.js';
import type { ChargeRecord } from './charge.js';
import type { Envelope } from './envelope.js';
import type { RateLimiterOptions } from './rate-limiter.js';
import type { CallOutcome } from './success.js';

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

/** The client's options with their defaults filled in. */
export type ResolvedClientOptions = Required<
  Omit<ClientOptions, 'dispatcher' | 'limits' | 'imageTimeoutMs' | 'sending' | 'notSent' | 'landedAnswer' | 'maxResponseBytes'>
> &
  ClientOptions;
