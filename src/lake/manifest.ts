import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { LakeAddress } from './lake-address.js';

/** One object of the lake as the last complete sync left it. */
export interface ManifestEntry {
  size: number;
  /** Hex SHA-256 of the bytes (also on the object as `x-amz-meta-sha256`). */
  sha256: string;
  /** Modification time of the local file it came from: unchanged size and time skip hashing. */
  mtime_ms: number;
}

/**
 * `_manifest.json` at the root of the prefix: every object of the last complete sync. It
 * is written after all of that sync's objects are up and before stale ones are deleted,
 * so every key it lists exists whenever a reader fetches it: a reader that wants one
 * consistent set reads the manifest, not a listing.
 */
export interface Manifest {
  format: 'pipeline-lake/1';
  written_at: string;
  files: Record<string, ManifestEntry>;
}

/** The manifest's key relative to the prefix. Leading '_' keeps Spark and Hive from reading it as data. */
export const MANIFEST_KEY = '_manifest.json';

/** The manifest of the lake, or undefined when there is none yet (or it is not ours). */
export async function readManifest(s3: S3Client, a: LakeAddress): Promise<Manifest | undefined> {
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: a.bucket, Key: a.prefix + MANIFEST_KEY }));
    const parsed = JSON.parse((await res.Body?.transformToString('utf8')) ?? '') as Partial<Manifest>;
    return parsed.format === 'pipeline-lake/1' && typeof parsed.files === 'object' && parsed.files ? (parsed as Manifest) : undefined;
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) return undefined;
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

/** Replaces the manifest in one PUT (atomic: a reader gets the old one or the new one). */
export async function writeManifest(s3: S3Client, a: LakeAddress, files: Record<string, ManifestEntry>, now: Date): Promise<void> {
  const body: Manifest = { format: 'pipeline-lake/1', written_at: now.toISOString(), files };
  await s3.send(
    new PutObjectCommand({
      Bucket: a.bucket,
      Key: a.prefix + MANIFEST_KEY,
      Body: `${JSON.stringify(body, null, 1)}\n`,
      ContentType: 'application/json',
      CacheControl: 'no-cache',
    }),
  );
}

/** True when two file maps list the same objects with the same bytes and times. */
export function sameFiles(a: Record<string, ManifestEntry>, b: Record<string, ManifestEntry>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => {
    const x = a[k]!;
    const y = b[k];
    return y !== undefined && x.size === y.size && x.sha256 === y.sha256 && x.mtime_ms === y.mtime_ms;
  });
}
