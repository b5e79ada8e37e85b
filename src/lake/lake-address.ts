import { EtlError } from '../errors.js';

/** Where the lake lives: a bucket and a key prefix ('' or ending in '/'). */
export interface LakeAddress {
  /** The address as given, without credentials (there never are any: they are refused). */
  url: string;
  bucket: string;
  /** Key prefix of the layout inside the bucket, '' or ending in '/'. */
  prefix: string;
}

/** S3 bucket names: 3–63 lower-case letters, digits, dots and hyphens (dots allowed for older buckets). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Parses `s3://bucket/prefix` (the prefix is optional; a trailing slash is implied). The
 * store itself (AWS or another S3-compatible server) comes from the AWS variables, not
 * from this address, so the same pipeline file works against MinIO in a test and S3 in
 * production. Credentials in the address are refused: they would end up in shell
 * history, logs and the pipeline file.
 */
export function parseLakeAddress(url: string): LakeAddress {
  const bad = (rule: string): EtlError =>
    new EtlError(
      'ETL_LAKE_CONFIG',
      `lake address ${JSON.stringify(redactUserinfo(url))} is not accepted: ${rule}; nothing was uploaded, fix the address and run again`,
      {
        context: { stage: 'lake' },
      },
    );
  const m = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(url.trim());
  if (!m) throw bad('expected s3://bucket or s3://bucket/prefix (the endpoint comes from AWS_ENDPOINT_URL)');
  const bucket = m[1] ?? '';
  if (bucket.includes('@')) throw bad('credentials do not belong in the address; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw bad(`bucket '${bucket}' is not a valid S3 bucket name (3-63 lower-case letters, digits, '.' and '-')`);
  const rest = (m[2] ?? '').replace(/\/+$/, '');
  if (/[?#]/.test(rest)) throw bad('the prefix may not hold ? or #');
  if (rest.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    if (rest !== '') throw bad("the prefix may not hold empty, '.' or '..' segments");
  }
  const prefix = rest === '' ? '' : `${rest}/`;
  return { url: `s3://${bucket}/${prefix}`, bucket, prefix };
}

/** `s3://key:secret@bucket` → `s3://***@bucket`, so a rejected address never prints a secret. */
function redactUserinfo(url: string): string {
  return url.replace(/^(s3:\/\/)[^/]*@/, '$1***@');
}
