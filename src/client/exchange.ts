import type { Endpoint } from '../catalog/index.js';
import { EtlError, isInterrupted } from '../errors.js';
import { redact } from '../redact.js';
import { rateLimitedIn200 } from './answers.js';
import { attempt, type Attempt } from './attempt.js';
import type { ResolvedClientOptions } from './client-types.js';
import { outcomeUnknown, type FailureContext } from './failures.js';
import type { RateLimiter } from './rate-limiter.js';
import { backoffDelay, decide, endpointRetry, type AttemptSeen, type OnceState } from './retry-policy.js';
import type { ServerClock } from './server-clock.js';
import type { Answered } from './v3-answer.js';

/** What an exchange needs of the client. */
export interface ExchangeClient {
  readonly opts: ResolvedClientOptions;
  readonly limiter: RateLimiter;
  readonly serverClock: ServerClock;
  timeoutFor(ep: Endpoint): number;
}

/**
 * Sends a call until its answer is final, as the retry policy decides (retry-policy.ts): each
 * attempt waits for its family's rate limit, a refusal penalizes the family, and every attempt
 * but the last is followed by the policy's backoff. A charged POST is in the ledger before it
 * goes (`sending`): neither a lost answer nor a kill while it is out leaves a charge the ledger
 * does not know of.
 */
export async function exchange(
  c: ExchangeClient,
  ep: Endpoint,
  path: string,
  body: string | undefined,
  tasksSent: number,
  f: FailureContext,
): Promise<Answered> {
  const { opts } = c;
  const rule = endpointRetry(ep, opts.maxAttempts);
  const timeoutMs = c.timeoutFor(ep);
  const writeAhead = ep.charged && ep.method === 'POST';
  const beforeSend = writeAhead
    ? (callId: string, at: Date) =>
        opts.sending?.({ callId, at, method: ep.method, path, endpointId: ep.id, tasksSent, tags: f.tags }) ?? Promise.resolve()
    : undefined;
  // An image attempt retried already, and whether one may have been charged (no answer, or a 5xx).
  const once: OnceState = { retried: false, unsure: false };
  for (let n = 1; ; n++) {
    const a = await scheduled(c, ep, path, f, once, (answered) =>
      attempt(opts, ep, path, body, tasksSent, timeoutMs, answered, beforeSend),
    );
    f.callIds.push(a.callId);
    if (a.kind === 'answered' && a.sentAt && a.receivedAt)
      c.serverClock.observe(a.serverDate ?? undefined, a.sentAt.getTime(), a.receivedAt.getTime());
    if (a.kind === 'not_sent' && writeAhead) await opts.notSent?.(a.callId);
    const verdict = decide(rule, seen(a), n, once);
    if (verdict.do === 'fail') throw failure(opts, ep, path, f, a, n, verdict.why);
    if (verdict.penalize && a.kind === 'answered') c.limiter.penalize(ep.family, a.retryAfterMs);
    if (verdict.do === 'answer' && a.kind === 'answered') return a;
    await opts.sleep(backoffDelay(opts, n, a.kind === 'answered' ? a.retryAfterMs : null));
  }
}

/** One attempt, once the family's rate limit lets it go; interrupted while waiting, it was never sent. */
async function scheduled(
  c: ExchangeClient,
  ep: Endpoint,
  path: string,
  f: FailureContext,
  once: OnceState,
  send: (answered: () => void) => Promise<Attempt>,
): Promise<Attempt> {
  try {
    return await c.limiter.schedule(
      ep.family,
      (answered) => send(answered),
      (r) => r.kind === 'answered' && (r.httpStatus === 429 || rateLimitedIn200(r)),
    );
  } catch (err) {
    // Interrupted (Ctrl-C) while waiting for the rate limit: this attempt was never sent, and
    // every attempt before it was refused or free, except an image attempt left unsure.
    if (!isInterrupted(err)) throw err;
    if (once.unsure) throw outcomeUnknown(f, 'interrupted before its one retry');
    throw new EtlError(
      'ETL_INTERRUPTED',
      `${ep.method} ${path}: interrupted while waiting for the rate limit, so it was not sent; nothing was created or charged.`,
      { context: { stage: 'client', path }, cause: err },
    );
  }
}

/** An attempt as the retry policy reads it. */
function seen(a: Attempt): AttemptSeen {
  if (a.kind !== 'answered') return { kind: a.kind };
  return { kind: 'answered', httpStatus: a.httpStatus, rateLimited: rateLimitedIn200(a), chargeCny: a.charge.chargeCny };
}

/** The error a call fails with when the policy gives up: never connected, no answer where sending again could charge twice, or no answer after every attempt. */
function failure(
  opts: ResolvedClientOptions,
  ep: Endpoint,
  path: string,
  f: FailureContext,
  a: Attempt,
  n: number,
  why: 'not_connected' | 'unknown' | 'timeout',
): EtlError {
  const said = a.kind === 'answered' ? '' : redact(errorText(a.error), [opts.apiKey]);
  if (why === 'not_connected')
    return new EtlError(
      'ETL_SERVICE_UNAVAILABLE',
      `${ep.method} ${opts.baseUrl}${path}: could not connect after ${n} attempts (${said}), so nothing was sent; check SVC_BASE_URL and the network, then run again.`,
      { context: { stage: 'client', path } },
    );
  const lost = `sent but got no answer (${said})`;
  if (why === 'unknown') return outcomeUnknown(f, lost);
  return new EtlError('ETL_TIMEOUT', `${ep.method} ${path}: ${lost} after ${n} attempts; running again can help.`, {
    context: { stage: 'client', path },
  });
}

function errorText(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return [e?.code, e?.message].filter(Boolean).join(': ') || String(err);
}
