import { z } from 'zod';
import type { Env } from './env.js';

/** `s3://bucket` or `s3://bucket/prefix`, without credentials (checked in full by the lake module). */
const LAKE_URL = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[^?#@]*)?$/;

/** The `lake:` field of a pipeline file. */
export const lakeUrlSchema = z
  .string()
  .regex(
    LAKE_URL,
    's3://bucket or s3://bucket/prefix (lower-case bucket name; the endpoint and credentials come from the AWS environment variables)',
  )
  .describe(
    'Object storage the published layout (parquet/ and serving.duckdb) is mirrored to after each run, e.g. s3://analytics/serp. Any S3-compatible store: the endpoint, region and credentials come from AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. Overridden by --lake and PIPELINE_LAKE.',
  );

/** The environment variable that names the lake for every pipeline of a machine. */
export const LAKE_ENV = 'PIPELINE_LAKE';

/**
 * The lake a run publishes to, if any: `--lake` on the command line, else `PIPELINE_LAKE`,
 * else the pipeline's `lake:`. An empty `--lake ''` or `PIPELINE_LAKE=` switches the lake
 * off for this run even when the file names one.
 */
export function resolveLake(o: { flag?: string | undefined; env: Env; pipeline?: { lake?: string | undefined } }): string | undefined {
  const pick = o.flag ?? o.env[LAKE_ENV] ?? o.pipeline?.lake;
  return pick === undefined || pick.trim() === '' ? undefined : pick.trim();
}
