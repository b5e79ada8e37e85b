import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';

/** Environment variables as `process.env` holds them. */
export type LakeEnv = Record<string, string | undefined>;

/** An S3 client for the lake, with what is needed to describe it without its secrets. */
export interface LakeClient {
  s3: S3Client;
  /** The custom endpoint (MinIO, R2, Ceph, s3rver...), or undefined for AWS S3. */
  endpoint: string | undefined;
  region: string;
  /** Values that must never appear in a message: the secret key, the session token, the key id. */
  secrets: string[];
}

export interface LakeClientOptions {
  /** Attempts per request, including the first (SDK standard retry mode: 5xx, throttling, network errors). */
  maxAttempts?: number;
  /** Milliseconds to open a connection before the attempt counts as failed. */
  connectionTimeoutMs?: number;
  /** Milliseconds of socket inactivity before an attempt counts as failed. */
  requestTimeoutMs?: number;
}

/**
 * Builds the S3 client from the standard AWS variables of `env`:
 * `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (any S3-compatible store; path-style
 * addressing then, which every such store serves), `AWS_REGION` or `AWS_DEFAULT_REGION`
 * (default us-east-1), `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`
 * (without them, the SDK's default chain: `AWS_PROFILE`, SSO, web identity, instance
 * role), `AWS_MAX_ATTEMPTS`. With a custom endpoint, request checksums are sent only
 * where S3 requires them (`AWS_REQUEST_CHECKSUM_CALCULATION` overrides): SDK releases
 * since early 2025 add CRC trailers that several S3-compatible stores reject or store.
 */
export function openLakeClient(env: LakeEnv, o: LakeClientOptions = {}): LakeClient {
  const endpoint = nonEmpty(env.AWS_ENDPOINT_URL_S3) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? 'us-east-1';
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
  const attempts = Number(env.AWS_MAX_ATTEMPTS);
  const checksums = nonEmpty(env.AWS_REQUEST_CHECKSUM_CALCULATION)?.toUpperCase();
  const config: S3ClientConfig = {
    region,
    maxAttempts: o.maxAttempts ?? (Number.isInteger(attempts) && attempts > 0 ? attempts : 5),
    retryMode: 'standard',
    // socketTimeout, not requestTimeout: the SDK's handler only logs a warning when a request
    // passes requestTimeout (unless throwOnRequestTimeout), and a whole-request limit would cut a
    // slow but moving upload. An attempt whose socket is idle this long fails (TimeoutError), and
    // is retried, so a store that accepts connections and never answers cannot hang a night.
    requestHandler: { connectionTimeout: o.connectionTimeoutMs ?? 10_000, socketTimeout: o.requestTimeoutMs ?? 60_000 },
  };
  if (endpoint) {
    config.endpoint = endpoint;
    config.forcePathStyle = true;
    config.requestChecksumCalculation = checksums === 'WHEN_SUPPORTED' ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED';
    config.responseChecksumValidation = 'WHEN_REQUIRED';
  } else {
    config.followRegionRedirects = true;
  }
  if (accessKeyId && secretAccessKey) {
    config.credentials = { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  }
  const secrets = [secretAccessKey, sessionToken, accessKeyId].filter((s): s is string => !!s);
  // The SDK warns on every Node below 22 that its releases after January 2027 will need 22: a
  // dozen lines in each nightly log and in doctor's one-line checks. package-lock.json pins a
  // release that runs on our Node 20; the SDK's own switch silences it, unless the user set it.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return { s3: new S3Client(config), endpoint, region, secrets };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v && v.trim() !== '' ? v.trim() : undefined;
}
