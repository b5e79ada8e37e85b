import type { Endpoint } from '../catalog/index.js';
import { errorRule } from '../errors.js';

/**
 * The client's retry policy as data, as undici's RetryHandler keeps its own (methods, status
 * codes, error codes, backoff, attempts), and the one function that reads it ({@link decide}).
 * It follows the spec's Errors rule 4: 429 and 5xx are retried with exponential backoff
 * (`Retry-After` honoured), and a 40202 (rate limit) inside an HTTP 200 body is a 429.
 *
 * A refusal (429, 40202, no connection) created and charged nothing, so any call is sent again
 * after it. A 5xx or a lost answer may have been billed: a free read is sent again; a `/v1` call
 * is sent again after a 5xx only when its answer says nothing was charged (`X-Svc-Charge-CNY`
 * 0); a charged `/v3` POST is never sent again here, as nothing proves it unprocessed (the run
 * stage looks its tasks up by tag first). Image generation waits and is retried once with a new
 * request id after any failure, 429 included, and never more.
 */
export const RETRY_POLICY = {
  /** Attempts at a call that is safe to repeat (ClientOptions.maxAttempts overrides). */
  maxAttempts: 5,
  /** First backoff delay; doubles per attempt up to `maxBackoffMs`, with jitter (ClientOptions overrides both). */
  backoffMs: 500,
  maxBackoffMs: 30_000,
  /** Methods whose calls are repeated after a lost answer or a 5xx even on a charged endpoint. */
  repeatableMethods: ['GET'] as readonly string[],
  /** HTTP statuses that refuse a call: nothing was created or charged. */
  refusedStatusCodes: [429] as readonly number[],
  /** The task status of a rate-limit refusal in an HTTP 200 answer (not created, not charged). */
  refusedTaskStatus: 40202,
  /** From this HTTP status on, the service may have processed (and billed) the call. */
  unsureFromStatus: 500,
  /** Error codes that prove the request never left this machine (no connection was made). */
  notSentErrorCodes: [
    'ECONNREFUSED',
    'ENOTFOUND',
    'EAI_AGAIN',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'UND_ERR_CONNECT_TIMEOUT',
  ] as readonly string[],
  /** Image generation: attempts after the first, after any failure (the spec's rule), with a new request id. */
  imageRetries: 1,
} as const;

/** How one endpoint's calls are retried, from its catalog entry. */
export interface EndpointRetry {
  maxAttempts: number;
  /** A lost answer or a 5xx is sent again: a free call, or a read. */
  repeatable: boolean;
  /** A `/v1` call: sent again after a 5xx whose answer says nothing was charged. */
  retryUncharged5xx: boolean;
  /** Image generation: retried `RETRY_POLICY.imageRetries` times after any failure, never more. */
  once: boolean;
}

/** The retry rule of an endpoint, built from the catalog. */
export function endpointRetry(ep: Endpoint, maxAttempts: number = RETRY_POLICY.maxAttempts): EndpointRetry {
  return {
    maxAttempts,
    repeatable: !ep.charged || RETRY_POLICY.repeatableMethods.includes(ep.method),
    retryUncharged5xx: ep.body === 'object',
    once: ep.resultKind === 'image_generation',
  };
}

/** One attempt as the policy sees it. */
export type AttemptSeen =
  { kind: 'not_sent' } | { kind: 'lost' } | { kind: 'answered'; httpStatus: number; rateLimited: boolean; chargeCny: string | null };

/** What to do after an attempt: send again, take the answer, or fail (no connection, no answer where repeating could charge twice, or attempts run out). */
export type Verdict =
  { do: 'retry'; penalize: boolean } | { do: 'answer'; penalize: boolean } | { do: 'fail'; why: 'not_connected' | 'unknown' | 'timeout' };

/** Where an image call stands: retried already, and whether an attempt may have been charged. */
export interface OnceState {
  retried: boolean;
  unsure: boolean;
}

/** The policy applied to attempt `n` of a call at an endpoint with rule `rule`. */
export function decide(rule: EndpointRetry, a: AttemptSeen, n: number, once: OnceState): Verdict {
  const more = n < rule.maxAttempts;
  if (a.kind === 'not_sent') return more ? { do: 'retry', penalize: false } : { do: 'fail', why: 'not_connected' };
  const refused = a.kind === 'answered' && (RETRY_POLICY.refusedStatusCodes.includes(a.httpStatus) || a.rateLimited);
  const unsure = a.kind === 'lost' || a.httpStatus >= RETRY_POLICY.unsureFromStatus;
  if (rule.once) {
    if (a.kind === 'lost' && once.retried) return { do: 'fail', why: 'unknown' };
    once.unsure = unsure;
    // An image call counts an HTTP refusal only (its answers carry no tasks).
    const penalize = a.kind === 'answered' && RETRY_POLICY.refusedStatusCodes.includes(a.httpStatus);
    const retry = (penalize || unsure) && !once.retried;
    once.retried ||= retry;
    return { do: retry ? 'retry' : 'answer', penalize };
  }
  if (a.kind === 'lost') {
    if (!rule.repeatable) return { do: 'fail', why: 'unknown' };
    return more ? { do: 'retry', penalize: false } : { do: 'fail', why: 'timeout' };
  }
  if (refused) return { do: more ? 'retry' : 'answer', penalize: true };
  const uncharged = rule.retryUncharged5xx && a.chargeCny !== null && Number(a.chargeCny) === 0;
  return { do: unsure && (rule.repeatable || uncharged) && more ? 'retry' : 'answer', penalize: false };
}

/** The wait before attempt `attempt + 1`: exponential with jitter, never less than the service's `Retry-After`. */
export function backoffDelay(
  o: { backoffMs: number; maxBackoffMs: number; random: () => number },
  attempt: number,
  retryAfterMs: number | null,
): number {
  const exp = Math.min(o.maxBackoffMs, o.backoffMs * 2 ** (attempt - 1));
  const jittered = exp / 2 + o.random() * (exp / 2);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** Whether a call that failed with this code created nothing (refused whole or never sent) and leaves the run going. */
export function createdNothing(code: string): boolean {
  const rule = errorRule(code);
  return rule.post === 'refused' && rule.stop !== 'end';
}
