import { HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { LakeAddress } from './lake-address.js';
import { isLayoutKey, LAYOUT } from './local-layout.js';

/**
 * Sizes of the layout's objects under the prefix, by key relative to the prefix. Lists
 * only `parquet/` and `serving.duckdb`, so other keys beside the layout cost nothing.
 */
export async function listRemoteLayout(s3: S3Client, a: LakeAddress): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const sub of [`${LAYOUT.parquetDir}/`, LAYOUT.servingFile]) {
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: a.bucket, Prefix: a.prefix + sub, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        if (!o.Key?.startsWith(a.prefix)) continue;
        const rel = o.Key.slice(a.prefix.length);
        if (isLayoutKey(rel)) out.set(rel, o.Size ?? 0);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
  return out;
}

/** The SHA-256 an object was uploaded with (`x-amz-meta-sha256`), or undefined. */
export async function remoteSha256(s3: S3Client, a: LakeAddress, rel: string): Promise<string | undefined> {
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: a.bucket, Key: a.prefix + rel }));
    return head.Metadata?.sha256;
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
    throw err;
  }
}
