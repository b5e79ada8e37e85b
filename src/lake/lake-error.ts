import { redact } from '../redact.js';
import { EtlError } from '../errors.js';

/** What was being done when the store failed, for the message. */
export interface LakeAttempt {
  /** S3 operation, e.g. 'ListObjectsV2' or 'upload parquet/serp_items/date=2026-01-01/part-0.parquet'. */
  op: string;
  /** The lake address, s3://bucket/prefix/. */
  url: string;
  /** The custom endpoint, or undefined for AWS S3. */
  endpoint: string | undefined;
  /** Values to remove from any text of the error (secret key, token, key id). */
  secrets: readonly string[];
}

const REFUSED = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'InvalidClientTokenId',
  'AuthorizationHeaderMalformed',
  'AllAccessDisabled',
  'AccountProblem',
  'Forbidden',
]);
const MISSING = new Set(['NoSuchBucket', 'PermanentRedirect', 'InvalidBucketName']);
const NETWORK = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|ECONNABORTED|UND_ERR_\w+)$/;

type SdkError = Error & { code?: string; Code?: string; $metadata?: { httpStatusCode?: number; attempts?: number }; $fault?: string };

/**
 * Turns what the AWS SDK threw into one of three stable errors, so a caller (the run's
 * preflight, `pipeline doctor`) can tell the user what to fix: `ETL_LAKE_CONFIG` (no such
 * bucket, no credentials found), `ETL_LAKE_REFUSED` (the store refused the credentials or
 * the permission) and `ETL_LAKE_UNREACHABLE` (nothing answered, a timeout, 5xx after the
 * SDK's retries; retryable). Secrets are removed from the message.
 */
export function lakeError(err: unknown, a: LakeAttempt): EtlError {
  if (err instanceof EtlError) return err;
  const e = (err ?? {}) as SdkError;
  const name = e.Code ?? e.name ?? '';
  const status = e.$metadata?.httpStatusCode;
  const attempts = e.$metadata?.attempts;
  const where = `${a.url} at ${a.endpoint ?? 'AWS S3'}`;
  const said = clean(e.message || String(err), a.secrets);
  const context = { stage: 'lake', op: a.op, url: a.url, endpoint: a.endpoint, status, s3Code: name || undefined };
  const cause = new Error(said);
  if (name === 'CredentialsProviderError' || /Could not load credentials/i.test(said)) {
    return new EtlError(
      'ETL_LAKE_CONFIG',
      `no credentials for the lake ${where}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE); nothing was sent`,
      { context, cause },
    );
  }
  if (MISSING.has(name)) {
    return new EtlError(
      'ETL_LAKE_CONFIG',
      `${a.op} on ${where}: ${name} (${said}); create the bucket or fix the address (and AWS_REGION); running again will not help until then`,
      { context, cause },
    );
  }
  if (REFUSED.has(name) || status === 401 || status === 403) {
    return new EtlError(
      'ETL_LAKE_REFUSED',
      `the store at ${a.endpoint ?? 'AWS S3'} refused ${a.op} on ${a.url} (HTTP ${status ?? '?'} ${name || 'refused'}): check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and that they may list, put and delete under the prefix; running again will not help until then`,
      { context, cause },
    );
  }
  if (name === 'NotImplemented' || status === 501) {
    return new EtlError(
      'ETL_LAKE_REFUSED',
      `the store at ${a.endpoint ?? 'AWS S3'} does not implement ${a.op} (HTTP ${status ?? 501} ${name}): ${said}`,
      { context, cause },
    );
  }
  const code = e.code ?? (e.cause as { code?: string } | undefined)?.code;
  const network =
    (code && NETWORK.test(code)) ||
    name === 'TimeoutError' ||
    name === 'RequestTimeout' ||
    /ECONNREFUSED|ENOTFOUND|timed? ?out|socket hang up/i.test(said);
  if (network || (status !== undefined && status >= 500) || e.$fault === 'server') {
    return new EtlError(
      'ETL_LAKE_UNREACHABLE',
      `no usable answer from ${a.endpoint ?? 'AWS S3'} for ${a.op} on ${a.url}${attempts ? ` after ${attempts} attempt${attempts === 1 ? '' : 's'}` : ''}: ${code ?? name}${status ? ` HTTP ${status}` : ''} ${said}; check AWS_ENDPOINT_URL and the network; running again later can help`,
      { context, cause },
    );
  }
  return new EtlError(
    'ETL_LAKE_REFUSED',
    `the store at ${a.endpoint ?? 'AWS S3'} rejected ${a.op} on ${a.url}: ${name || 'error'}${status ? ` (HTTP ${status})` : ''} ${said}`,
    { context, cause },
  );
}

/** Removes the secrets of the attempt (and any API key) from a text. */
export function clean(text: string, secrets: readonly string[]): string {
  return redact(text, secrets);
}
