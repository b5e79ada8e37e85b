import { randomUUID } from 'node:crypto';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { parseLakeAddress } from './lake-address.js';
import { openLakeClient, type LakeClientOptions, type LakeEnv } from './lake-client.js';
import { lakeError } from './lake-error.js';

/** What the preflight found: the store answered and let us list, put and delete. */
export interface LakeCheck {
  url: string;
  endpoint: string | undefined;
  region: string;
  /** Milliseconds the three calls took together. */
  ms: number;
}

/**
 * The preflight of a run with a lake, made before any paid call: lists one key under the
 * prefix, puts a small probe object and deletes it, so a wrong address, a missing bucket
 * or refused credentials stop the run while nothing has been bought yet. Throws
 * `ETL_LAKE_CONFIG`, `ETL_LAKE_REFUSED` or `ETL_LAKE_UNREACHABLE` (see `lakeError`), with
 * the secrets removed. Uses fewer retries than a sync: a preflight should answer fast.
 *
 * @example await checkLake('s3://analytics/serp', process.env)
 */
export async function checkLake(url: string, env: LakeEnv, o: LakeClientOptions = {}): Promise<LakeCheck> {
  const address = parseLakeAddress(url);
  const { s3, endpoint, region, secrets } = openLakeClient(env, {
    maxAttempts: 2,
    connectionTimeoutMs: 5_000,
    requestTimeoutMs: 30_000,
    ...o,
  });
  const started = Date.now();
  const probe = `${address.prefix}_lake_probe/${randomUUID()}`;
  let op = 'ListObjectsV2';
  try {
    // Listed under the probe's own prefix, where nothing is: the permission is the prefix's, and
    // no page is cut short. `MaxKeys: 1` on a lake holding a night gave a truncated page, whose
    // continuation token s3rver 3.7.1 cannot make under Node 20 (HTTP 500, every next run).
    await s3.send(new ListObjectsV2Command({ Bucket: address.bucket, Prefix: probe }));
    op = 'PutObject (probe)';
    await s3.send(new PutObjectCommand({ Bucket: address.bucket, Key: probe, Body: 'pipeline lake probe\n', ContentType: 'text/plain' }));
    op = 'DeleteObject (probe)';
    await s3.send(new DeleteObjectCommand({ Bucket: address.bucket, Key: probe }));
    return { url: address.url, endpoint, region, ms: Date.now() - started };
  } catch (err) {
    throw lakeError(err, { op, url: address.url, endpoint, secrets });
  } finally {
    s3.destroy();
  }
}
