import { EtlError } from '../errors.js';
import { redact } from '../redact.js';
import { rateLimitedIn200 } from './answers.js';
import type { Attempt } from './attempt.js';
import type { CallResult } from './client-types.js';
import { envelopeSchema, type Envelope } from './envelope.js';
import { outcomeUnknown, statusError, v1ErrorDetail, type FailureContext } from './failures.js';
import { evaluateEnvelope } from './success.js';

/** An attempt the service answered. */
export type Answered = Extract<Attempt, { kind: 'answered' }>;

/** A `/v3` answer as the call's result, or the error it means (the spec's success rule). */
export function finishV3(f: FailureContext, res: Answered, aiTaskCreation = false): CallResult {
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
        f.apiKey,
      ]),
      { context: ctx },
    );
  }
  return { endpoint: ep, path, callId: res.callId, httpStatus: res.httpStatus, charge: res.charge, envelope, outcome };
}

/** The error a `/v1` answer that is not a success means. */
export function v1Failure(f: FailureContext, res: Answered): EtlError {
  f.charge = res.charge;
  const detail = v1ErrorDetail(res.text);
  const known = statusError(f, res.httpStatus, detail, res.location ?? null);
  if (known) return known;
  if (res.httpStatus >= 500)
    return outcomeUnknown(f, `HTTP ${res.httpStatus}${detail ? ` (${redact(detail, [f.apiKey])})` : ''}`, res.httpStatus);
  const code = res.httpStatus === 400 ? 'ETL_REQUEST_INVALID' : 'ETL_SERVICE_ERROR';
  return new EtlError(
    code,
    redact(`${f.ep.method} ${f.path}: the service refused the body (HTTP ${res.httpStatus}${detail ? `: ${detail}` : ''})`, [f.apiKey]),
    {
      context: { stage: 'client', path: f.path, requestId: res.charge.requestId ?? res.callId },
    },
  );
}
