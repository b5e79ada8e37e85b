import type { Endpoint } from '../catalog/index.js';
import { EtlError, type ErrorCode } from '../errors.js';
import type { ChargeRecord } from './charge.js';
import { redact } from '../redact.js';

/** What a failure message may say about the call. */
export interface FailureContext {
  ep: Endpoint;
  path: string;
  apiKey: string;
  /** Client request ids of every attempt, in order. */
  callIds: string[];
  /** Tags of the tasks sent, so the run stage can look them up by tag. */
  tags: string[];
  charge?: ChargeRecord;
}

function context(f: FailureContext): Record<string, unknown> {
  return {
    stage: 'client',
    path: f.path,
    endpointId: f.ep.id,
    requestId: f.charge?.requestId ?? f.callIds.at(-1),
    clientRequestIds: f.callIds,
    tags: f.tags,
    ...(f.charge?.chargeCny != null ? { chargeCny: f.charge.chargeCny } : {}),
  };
}

/**
 * A charged call whose answer never came (timeout, dropped connection, or a 5xx after
 * sending): the service may have created and billed it, so it is not sent again. The
 * error carries the tags and request ids so the caller can find out what happened.
 */
export function outcomeUnknown(f: FailureContext, why: string, httpStatus?: number): EtlError {
  const tags = f.tags.length ? ` Tags: ${f.tags.slice(0, 5).join(', ')}${f.tags.length > 5 ? `, ... (${f.tags.length})` : ''}.` : '';
  const lookup =
    f.ep.body === 'tasks'
      ? ' Look the tasks up by tag (id_list with include_metadata) before posting them again.'
      : ' Check the ledger and balance for this request id before calling again.';
  return new EtlError(
    'ETL_OUTCOME_UNKNOWN',
    redact(
      `${f.ep.method} ${f.path}: ${why} (request id ${f.callIds.join(', ')}); the service may have charged this call, so it was not re-sent.${tags}${lookup}`,
      [f.apiKey],
    ),
    // `httpStatus`: the service answered (a 5xx after sending), so it is done with the request
    // and a look-up by tag tells what it created; absent after a timeout or a dropped answer.
    { context: { ...context(f), ...(httpStatus === undefined ? {} : { httpStatus }) } },
  );
}

/** Errors an HTTP status means on any endpoint, or undefined for statuses handled by the caller. */
export function statusError(f: FailureContext, status: number, detail = '', location: string | null = null): EtlError | undefined {
  const d = detail ? `: ${redact(detail, [f.apiKey])}` : '';
  const make = (code: ErrorCode, msg: string) => new EtlError(code, `${f.ep.method} ${f.path}: ${msg}`, { context: context(f) });
  // The service never redirects: a proxy or a wrong base address does. Not followed, so the key
  // is sent nowhere else (and a charged POST is not sent twice).
  if (status >= 300 && status < 400)
    return make(
      'ETL_SERVICE_UNAVAILABLE',
      `HTTP ${status}, a redirect${location ? ` to ${redact(location, [f.apiKey])}` : ''}, not followed: the service does not redirect. Check SVC_BASE_URL (an http:// address that a proxy sends on to https://?), then run again.`,
    );
  switch (status) {
    case 401:
      return make(
        'ETL_AUTH',
        `the service refused the API key (HTTP 401${d}). Check SVC_API_KEY: it must be a valid svc_live_ or svc_sandbox_ key for this base address.`,
      );
    case 402:
      return make(
        'ETL_PAYMENT_REQUIRED',
        `the account balance cannot cover this call (HTTP 402${d}). Top up the balance, then run again to continue.`,
      );
    case 403:
      return make(
        'ETL_AUTH',
        f.ep.resultKind === 'image_generation'
          ? `image generation refused (HTTP 403${d}): it takes a live key (svc_live_...), never a sandbox key.`
          : `the key may not call this endpoint (HTTP 403${d}).`,
      );
    case 429:
      return make(
        'ETL_RATE_LIMITED',
        `still rate limited after retries (HTTP 429${d}); nothing was created or charged, and running again later helps.`,
      );
    default:
      return undefined;
  }
}

/** Pulls `error.message` (and type, code) from a standard `/v1` error body, if it is one. */
export function v1ErrorDetail(text: string): string {
  try {
    const e = (JSON.parse(text) as { error?: { message?: unknown; type?: unknown; code?: unknown } }).error;
    if (!e) return '';
    return [e.type, e.code, e.message].filter((x) => x !== undefined && x !== null && x !== '').join(' ');
  } catch {
    return '';
  }
}
