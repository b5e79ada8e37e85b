import { DeleteObjectCommand, DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { parseLakeAddress, type LakeAddress } from './lake-address.js';
import { openLakeClient, type LakeClientOptions, type LakeEnv } from './lake-client.js';
import { lakeError } from './lake-error.js';
import { fileSha256 } from './file-sha256.js';
import { LAYOUT, listLocalLayout, type LocalFile } from './local-layout.js';
import { readManifest, sameFiles, writeManifest, type ManifestEntry } from './manifest.js';
import { planSync, recordedSha, type HashedFile } from './plan-sync.js';
import { listRemoteLayout, remoteSha256 } from './remote-objects.js';
import { uploadFile } from './upload-file.js';

/** One key the sync could not upload or delete, and why (secrets removed). */
export interface LakeFailure {
  key: string;
  op: 'upload' | 'delete';
  code: string;
  message: string;
}

/** What one sync did. `committed` is false when an upload failed: the manifest and deletions then wait for the next sync. */
export interface LakeOutcome {
  url: string;
  uploaded: { files: number; bytes: number; multipart: number };
  skipped: { files: number; bytes: number };
  deleted: { files: number };
  /** Files hashed because their size or time differed from the manifest (the rest were trusted). */
  hashed: number;
  manifestWritten: boolean;
  committed: boolean;
  failed: LakeFailure[];
  ms: number;
}

export interface SyncLakeOptions extends LakeClientOptions {
  /** Environment with the AWS variables; default `process.env`. */
  env?: LakeEnv;
  /** Bytes per multipart part (default 16 MiB; S3's minimum is 5 MiB). */
  partSize?: number;
  /** Files uploaded at once (default 4). */
  concurrency?: number;
  /** Parts of one file in flight at once (default 2). */
  queueSize?: number;
  /** Called after each file is uploaded, skipped or deleted. */
  onFile?: (e: { key: string; action: 'uploaded' | 'skipped' | 'deleted'; bytes: number }) => void;
  now?: () => Date;
}

/**
 * Mirrors the published layout of a warehouse folder (`parquet/` and `serving.duckdb`)
 * to `s3://bucket/prefix/` under the same relative keys, so external tables over
 * `parquet/<table>/date=<d>/` read there what they read here.
 *
 * Order, so a reader of the lake always finds a consistent set: the Parquet files that
 * are new or changed, then the serving catalog, then `_manifest.json` (the commit point;
 * every key it lists is up), then the deletion of keys that are gone locally (a rewritten
 * or compacted partition's old files). A file already in the lake with the same bytes is
 * not sent again. If an upload fails, the rest still go, but the manifest is not written
 * and nothing is deleted: the next sync finishes the job. Throws a lake `EtlError` only
 * when the store cannot be listed or the manifest cannot be written.
 *
 * @example const outcome = await syncLake('warehouse', 's3://analytics/serp', { env: process.env })
 */
export async function syncLake(localWarehouseDir: string, url: string, o: SyncLakeOptions = {}): Promise<LakeOutcome> {
  const started = Date.now();
  const address = parseLakeAddress(url);
  const { s3, endpoint, secrets } = openLakeClient(o.env ?? process.env, o);
  const fail = (op: string) => (err: unknown) => lakeError(err, { op, url: address.url, endpoint, secrets });
  try {
    const [remote, manifest] = await Promise.all([
      listRemoteLayout(s3, address).catch((e) => Promise.reject(fail('ListObjectsV2')(e))),
      readManifest(s3, address).catch((e) => Promise.reject(fail('GetObject _manifest.json')(e))),
    ]);
    const recorded = manifest?.files ?? {};
    const { files, hashed } = await hashLocal(await listLocalLayout(localWarehouseDir), recorded);
    const plan = planSync(files, recorded, remote);
    for (const f of plan.verify) {
      const sha = await remoteSha256(s3, address, f.rel).catch((e) => Promise.reject(fail(`HeadObject ${f.rel}`)(e)));
      (sha === f.sha256 ? plan.skip : plan.upload).push(f);
    }

    const out: LakeOutcome = {
      url: address.url,
      uploaded: { files: 0, bytes: 0, multipart: 0 },
      skipped: { files: plan.skip.length, bytes: plan.skip.reduce((n, f) => n + f.size, 0) },
      deleted: { files: 0 },
      hashed,
      manifestWritten: false,
      committed: false,
      failed: [],
      ms: 0,
    };
    for (const f of plan.skip) o.onFile?.({ key: f.rel, action: 'skipped', bytes: f.size });
    // Once an upload found the store unreachable (after its attempts), the rest are not tried:
    // each would wait out its attempts in turn (a store that stopped answering held a night for hours).
    let unreachable: string | undefined;
    const put = async (f: HashedFile): Promise<void> => {
      if (unreachable) {
        out.failed.push({ key: f.rel, op: 'upload', code: 'ETL_LAKE_UNREACHABLE', message: `not tried: ${unreachable}` });
        return;
      }
      try {
        const parts = await uploadFile(s3, address, f, { partSize: o.partSize ?? 16 * 1024 * 1024, queueSize: o.queueSize ?? 2 });
        out.uploaded.files++;
        out.uploaded.bytes += f.size;
        if (parts > 1) out.uploaded.multipart++;
        o.onFile?.({ key: f.rel, action: 'uploaded', bytes: f.size });
      } catch (err) {
        const e = fail(`upload ${f.rel}`)(err);
        out.failed.push({ key: f.rel, op: 'upload', code: e.code, message: e.message });
        if (e.code === 'ETL_LAKE_UNREACHABLE') unreachable ??= `the store did not answer the upload of ${f.rel}`;
      }
    };
    // The serving catalog's views name Parquet files: it goes up only after all of them.
    const [serving, data] = partition(plan.upload, (f) => f.rel === LAYOUT.servingFile);
    await inParallel(data, o.concurrency ?? 4, put);
    if (out.failed.length === 0) await inParallel(serving, 1, put);

    if (out.failed.length === 0) {
      const next: Record<string, ManifestEntry> = {};
      for (const f of files) next[f.rel] = { size: f.size, sha256: f.sha256, mtime_ms: f.mtimeMs };
      if (!manifest || !sameFiles(next, recorded)) {
        await writeManifest(s3, address, next, (o.now ?? (() => new Date()))()).catch((e) =>
          Promise.reject(fail('PutObject _manifest.json')(e)),
        );
        out.manifestWritten = true;
      }
      out.committed = true;
      await removeStale(s3, address, plan.remove, out, fail, o.onFile);
    }
    out.ms = Date.now() - started;
    return out;
  } finally {
    s3.destroy();
  }
}

/**
 * Each local file with its SHA-256: the manifest's where it records the file unchanged
 * (recordedSha), else read from the file; `hashed` counts those read.
 */
async function hashLocal(
  local: readonly LocalFile[],
  recorded: Record<string, ManifestEntry>,
): Promise<{ files: HashedFile[]; hashed: number }> {
  let hashed = 0;
  const files: HashedFile[] = [];
  for (const f of local) {
    let sha = recordedSha(f, recorded);
    if (!sha) {
      sha = await fileSha256(f.path);
      hashed++;
    }
    files.push({ ...f, sha256: sha });
  }
  return { files, hashed };
}

async function removeStale(
  s3: S3Client,
  a: LakeAddress,
  keys: readonly string[],
  out: LakeOutcome,
  fail: (op: string) => (err: unknown) => { code: string; message: string },
  onFile: SyncLakeOptions['onFile'],
): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    try {
      const res = await s3.send(
        new DeleteObjectsCommand({ Bucket: a.bucket, Delete: { Objects: batch.map((k) => ({ Key: a.prefix + k })), Quiet: true } }),
      );
      const bad = new Map((res.Errors ?? []).map((e) => [e.Key?.slice(a.prefix.length) ?? '', e]));
      for (const key of batch) {
        const e = bad.get(key);
        if (e) out.failed.push({ key, op: 'delete', code: 'ETL_LAKE_REFUSED', message: `${e.Code ?? 'error'}: ${e.Message ?? ''}` });
        else {
          out.deleted.files++;
          onFile?.({ key, action: 'deleted', bytes: 0 });
        }
      }
    } catch (err) {
      const e = fail(`DeleteObjects (${batch.length} keys)`)(err);
      if (e.code === 'ETL_LAKE_UNREACHABLE') {
        for (const key of batch) out.failed.push({ key, op: 'delete', code: e.code, message: e.message });
        continue;
      }
      // Some S3-compatible stores lack the batch delete (GCS's XML API) or want its
      // Content-MD5: one DeleteObject per key then.
      for (const key of batch) {
        try {
          await s3.send(new DeleteObjectCommand({ Bucket: a.bucket, Key: a.prefix + key }));
          out.deleted.files++;
          onFile?.({ key, action: 'deleted', bytes: 0 });
        } catch (one) {
          const e1 = fail(`DeleteObject ${key}`)(one);
          out.failed.push({ key, op: 'delete', code: e1.code, message: e1.message });
        }
      }
    }
  }
}

function partition<T>(xs: readonly T[], pred: (x: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const x of xs) (pred(x) ? yes : no).push(x);
  return [yes, no];
}

async function inParallel<T>(items: readonly T[], width: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, width), items.length) }, worker));
}
