import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { AbortMultipartUploadCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { EtlError } from '../errors.js';
import type { LakeAddress } from './lake-address.js';
import type { HashedFile } from './plan-sync.js';

export interface UploadOptions {
  /** Bytes per part; files above it go multipart. S3's minimum is 5 MiB. */
  partSize: number;
  /** Parts of one file in flight at once. */
  queueSize: number;
}

/**
 * Uploads one file under its final key: a single PUT below the part size, a multipart
 * upload above it. Both become visible only when complete (PUT and
 * CompleteMultipartUpload are atomic in S3), and a failed multipart upload is aborted
 * (best effort: its parts are never visible under the key either way), so no reader
 * ever sees half an object. The SHA-256 rides along as `x-amz-meta-sha256`
 * so an interrupted sync can tell later which objects already hold the right bytes.
 * Returns the number of parts (1 for a single PUT).
 */
export async function uploadFile(s3: S3Client, a: LakeAddress, f: HashedFile, o: UploadOptions): Promise<number> {
  if (f.size === 0) {
    await s3.send(new PutObjectCommand({ Bucket: a.bucket, Key: a.prefix + f.rel, Body: '', Metadata: { sha256: f.sha256 } }));
    return 1;
  }
  let parts = 0;
  const upload = new Upload({
    client: s3,
    params: {
      Bucket: a.bucket,
      Key: a.prefix + f.rel,
      Body: createReadStream(f.path),
      ContentLength: f.size,
      ContentType: f.rel.endsWith('.parquet') ? 'application/vnd.apache.parquet' : 'application/octet-stream',
      Metadata: { sha256: f.sha256 },
    },
    partSize: o.partSize,
    queueSize: o.queueSize,
    // We abort ourselves: lib-storage's own abort replaces the upload's error with the
    // abort's when the abort fails too (as on servers without AbortMultipartUpload).
    leavePartsOnError: true,
  });
  upload.on('httpUploadProgress', (p) => {
    if (p.part !== undefined && p.part > parts) parts = p.part;
  });
  try {
    await upload.done();
  } catch (err) {
    if (upload.uploadId) {
      await s3.send(new AbortMultipartUploadCommand({ Bucket: a.bucket, Key: a.prefix + f.rel, UploadId: upload.uploadId })).catch(() => {
        // Parts stay invisible (never under the key); a lifecycle rule
        // AbortIncompleteMultipartUpload reclaims them (docs/lake.md).
      });
    }
    throw err;
  }
  const after = await stat(f.path);
  if (after.size !== f.size || after.mtimeMs !== f.mtimeMs) {
    throw new EtlError(
      'ETL_WAREHOUSE',
      `${f.rel} changed while it was uploaded (another publish running?); run the sync again once it is done`,
      {
        context: { stage: 'lake', path: f.path },
      },
    );
  }
  return Math.max(parts, 1);
}
