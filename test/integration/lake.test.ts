import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EtlError } from '../../src/errors.js';
import { checkLake, syncLake, type Manifest } from '../../src/lake/index.js';
import { listLocalLayout } from '../../src/lake/local-layout.js';
import { tempDir } from './helpers.js';
import { deadPort, faultyProxy, getBytes, listKeys, startS3, writeBigParquet, writeLayout, type LocalS3 } from './lake-helpers.js';

const URL_ = 's3://lake/nightly/serp';
const PREFIX = 'nightly/serp/';

/** The local layout's keys under the prefix, as the lake should hold them. */
async function expectedKeys(wh: string): Promise<string[]> {
  return (await listLocalLayout(wh)).map((f) => PREFIX + f.rel);
}

/** Every object of the lake equals its local file, byte for byte, and the manifest lists exactly them. */
async function expectMirror(s3: LocalS3, wh: string): Promise<void> {
  const local = await listLocalLayout(wh);
  expect(local.length).toBeGreaterThan(0);
  const keys = await listKeys(s3, PREFIX);
  expect(keys).toEqual([...local.map((f) => PREFIX + f.rel), `${PREFIX}_manifest.json`].sort());
  for (const f of local) expect((await getBytes(s3, PREFIX + f.rel)).equals(await readFile(f.path))).toBe(true);
  const manifest = JSON.parse((await getBytes(s3, `${PREFIX}_manifest.json`)).toString('utf8')) as Manifest;
  expect(Object.keys(manifest.files).sort()).toEqual(local.map((f) => f.rel));
}

const writes = (requests: string[]) => requests.filter((r) => /^(PUT|POST|DELETE) /.test(r));

describe('the lake on a real S3-compatible server (s3rver on loopback)', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let s3: LocalS3;
  let wh: string;

  beforeAll(async () => {
    tmp = await tempDir('pipeline-lake-');
  });
  afterAll(async () => {
    await tmp.cleanup();
  });
  beforeEach(async (ctx) => {
    const id = ctx.task.id.replace(/\W/g, '');
    s3 = await startS3(join(tmp.dir, `s3-${id}`));
    wh = join(tmp.dir, `wh-${id}`);
    await mkdir(wh, { recursive: true });
  });
  afterEach(async () => {
    await s3.close();
  });

  it('mirrors parquet/ and serving.duckdb byte for byte, with the manifest last; the run’s private files stay home', async () => {
    await writeLayout(wh);
    await writeFile(join(wh, 'warehouse.duckdb'), 'private');
    await mkdir(join(wh, 'raw'), { recursive: true });
    await writeFile(join(wh, 'raw', 'body.json'), '{}');
    await writeFile(join(wh, 'parquet', 'serp_items', '.part-9.parquet.tmp'), 'half written');

    const out = await syncLake(wh, URL_, { env: s3.env });

    const local = await listLocalLayout(wh);
    expect(local.map((f) => f.rel)).toContain('serving.duckdb');
    expect(local.map((f) => f.rel)).toContain('parquet/serp_items/date=2026-01-03/part-0.parquet');
    expect(out).toMatchObject({ committed: true, manifestWritten: true, failed: [], skipped: { files: 0 }, deleted: { files: 0 } });
    expect(out.uploaded.files).toBe(local.length);
    expect(out.uploaded.bytes).toBe(local.reduce((n, f) => n + f.size, 0));
    await expectMirror(s3, wh);
    // Parquet first, then the serving catalog that names it, then the manifest.
    const puts = writes(s3.requests).map((r) => r.split('?')[0]!);
    expect(puts.at(-1)).toBe(`PUT /lake/${PREFIX}_manifest.json`);
    expect(puts.at(-2)).toBe(`PUT /lake/${PREFIX}serving.duckdb`);
  });

  it('a rerun uploads nothing, rewrites nothing and hashes nothing', async () => {
    await writeLayout(wh);
    await syncLake(wh, URL_, { env: s3.env });
    const before = s3.requests.length;
    const again = await syncLake(wh, URL_, { env: s3.env });
    expect(again).toMatchObject({
      uploaded: { files: 0, bytes: 0 },
      deleted: { files: 0 },
      hashed: 0,
      manifestWritten: false,
      committed: true,
    });
    expect(again.skipped.files).toBe((await listLocalLayout(wh)).length);
    expect(writes(s3.requests.slice(before))).toEqual([]);
  });

  it('a rewritten partition replaces its objects and the stale ones go, after the new manifest', async () => {
    await writeLayout(wh);
    await syncLake(wh, URL_, { env: s3.env });
    const oldKeys = await listKeys(s3, PREFIX);
    expect(oldKeys).toContain(`${PREFIX}parquet/ledger/date=2026-01-02/part-0.parquet`);

    // A re-parse rewrites serp_items with other ranks (same partitions, new bytes); the
    // ledger is gone from the published set (e.g. compacted away or no longer published).
    await rm(join(wh, 'parquet'), { recursive: true });
    await rm(join(wh, 'serving', 'lake.duckdb'));
    await writeLayout(wh, { seed: 2, tables: ['serp_items'] });
    const before = s3.requests.length;
    const out = await syncLake(wh, URL_, { env: s3.env });

    expect(out.failed).toEqual([]);
    expect(out.uploaded.files).toBe(4); // three serp partitions and the serving catalog
    expect(out.deleted.files).toBe(oldKeys.filter((k) => k.includes('/ledger/')).length);
    await expectMirror(s3, wh);
    expect((await listKeys(s3, PREFIX)).some((k) => k.includes('/ledger/'))).toBe(false);
    const w = writes(s3.requests.slice(before)).map((r) => r.split('?')[0]!);
    const manifestAt = w.indexOf(`PUT /lake/${PREFIX}_manifest.json`);
    expect(manifestAt).toBeGreaterThan(0);
    expect(w.slice(manifestAt + 1).every((r) => r.startsWith('POST /lake'))).toBe(true); // DeleteObjects after it
    expect(w.slice(0, manifestAt).every((r) => r.startsWith('PUT '))).toBe(true);

    // Touched but byte-identical files are hashed again and still not sent.
    await writeLayout(wh, { seed: 2, tables: ['serp_items'] });
    const mark = s3.requests.length;
    const same = await syncLake(wh, URL_, { env: s3.env });
    expect(same.hashed).toBe((await listLocalLayout(wh)).length);
    // DuckDB writes the same Parquet bytes again: none is sent (the serving file's header may differ).
    expect(writes(s3.requests.slice(mark)).filter((r) => r.includes('.parquet'))).toEqual([]);
    expect(same.skipped.files).toBeGreaterThanOrEqual(3);
    await expectMirror(s3, wh);
  });

  it('a big file goes multipart and arrives whole', async () => {
    await writeLayout(wh, { tables: ['serp_items'] });
    const big = join(wh, 'parquet', 'big', 'date=2026-01-01', 'part-0.parquet');
    await mkdir(join(big, '..'), { recursive: true });
    await writeBigParquet(big, 11 * 1024 * 1024);
    const size = (await readFile(big)).length;
    expect(size).toBeGreaterThan(10 * 1024 * 1024);

    const out = await syncLake(wh, URL_, { env: s3.env, partSize: 5 * 1024 * 1024 });

    expect(out.uploaded.multipart).toBe(1);
    const key = `/lake/${PREFIX}parquet/big/date=2026-01-01/part-0.parquet`;
    expect(s3.requests.filter((r) => r.startsWith(`POST ${key}?uploads`))).toHaveLength(1);
    expect(s3.requests.filter((r) => r.startsWith(`PUT ${key}?`) && r.includes('partNumber='))).toHaveLength(
      Math.ceil(size / (5 * 1024 * 1024)),
    );
    expect(s3.requests.filter((r) => r.startsWith(`POST ${key}?uploadId=`))).toHaveLength(1);
    await expectMirror(s3, wh);
  });

  it('a failed multipart upload leaves no object under its key, commits nothing, and the next sync finishes', async () => {
    await writeLayout(wh, { tables: ['serp_items'] });
    const big = join(wh, 'parquet', 'big', 'date=2026-01-01', 'part-0.parquet');
    await mkdir(join(big, '..'), { recursive: true });
    await writeBigParquet(big, 11 * 1024 * 1024);
    const proxy = await faultyProxy(s3.endpoint, (req) => req.method === 'PUT' && /partNumber=2\b/.test(req.url ?? ''));
    try {
      const out = await syncLake(wh, URL_, {
        env: { ...s3.env, AWS_ENDPOINT_URL: proxy.endpoint, AWS_MAX_ATTEMPTS: '2' },
        partSize: 5 * 1024 * 1024,
      });
      expect(out.committed).toBe(false);
      expect(out.manifestWritten).toBe(false);
      expect(out.failed.map((f) => f.key)).toEqual(['parquet/big/date=2026-01-01/part-0.parquet']);
      expect(out.failed[0]!.code).toBe('ETL_LAKE_UNREACHABLE');
      const keys = await listKeys(s3, PREFIX);
      expect(keys).not.toContain(`${PREFIX}parquet/big/date=2026-01-01/part-0.parquet`);
      expect(keys).not.toContain(`${PREFIX}_manifest.json`);
      expect(keys).not.toContain(`${PREFIX}serving.duckdb`); // it names Parquet that is not all up
    } finally {
      await proxy.close();
    }
    const next = await syncLake(wh, URL_, { env: s3.env, partSize: 5 * 1024 * 1024 });
    expect(next).toMatchObject({ committed: true, failed: [] });
    expect(next.uploaded.files).toBe(2); // the big file and the serving catalog; the partitions put before are verified, not resent
    expect(next.skipped.files).toBe(3);
    await expectMirror(s3, wh);
  });

  it('falls back to one DeleteObject per key where the store has no batch delete (as GCS’s XML API)', async () => {
    await writeLayout(wh);
    await syncLake(wh, URL_, { env: s3.env });
    await rm(join(wh, 'parquet', 'ledger'), { recursive: true });
    const proxy = await faultyProxy(s3.endpoint, (req) => req.method === 'POST' && /[?&]delete\b/.test(req.url ?? ''), {
      status: 501,
      code: 'NotImplemented',
    });
    try {
      const out = await syncLake(wh, URL_, { env: { ...s3.env, AWS_ENDPOINT_URL: proxy.endpoint } });
      expect(out).toMatchObject({ committed: true, failed: [], uploaded: { files: 0 }, deleted: { files: 2 } });
    } finally {
      await proxy.close();
    }
    await expectMirror(s3, wh);
  });

  it('a store that takes uploads and never answers: each attempt ends at the idle timeout, and the rest are not tried', async () => {
    await writeLayout(wh);
    const puts: string[] = [];
    const proxy = await faultyProxy(s3.endpoint, (req) => req.method === 'PUT' && puts.push(req.url ?? '') > 0, 'hang');
    try {
      const t0 = Date.now();
      const out = await syncLake(wh, URL_, {
        env: { ...s3.env, AWS_ENDPOINT_URL: proxy.endpoint },
        requestTimeoutMs: 300,
        maxAttempts: 2,
        concurrency: 1,
      });
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(out.committed).toBe(false);
      expect(out.uploaded.files).toBe(0);
      const local = await listLocalLayout(wh);
      // Every data file failed (the serving catalog goes up only after all of them).
      expect(out.failed).toHaveLength(local.length - 1);
      expect(out.failed[0]).toMatchObject({ op: 'upload', code: 'ETL_LAKE_UNREACHABLE' });
      expect(
        out.failed
          .slice(1)
          .every((f) => f.code === 'ETL_LAKE_UNREACHABLE' && f.message.startsWith('not tried: the store did not answer the upload of')),
      ).toBe(true);
      // One file's two attempts, then nothing more was sent.
      expect(puts).toHaveLength(2);
      await expect(checkLake(URL_, { ...s3.env, AWS_ENDPOINT_URL: proxy.endpoint }, { requestTimeoutMs: 300 })).rejects.toMatchObject({
        code: 'ETL_LAKE_UNREACHABLE',
      });
    } finally {
      await proxy.close();
    }
    expect(await listKeys(s3, PREFIX)).toEqual([]);
  }, 30_000);

  it('checkLake passes against the store and leaves no probe behind', async () => {
    const check = await checkLake(URL_, s3.env);
    expect(check).toMatchObject({ url: `s3://lake/${PREFIX}`, endpoint: s3.endpoint });
    expect(await listKeys(s3)).toEqual([]);
    expect(s3.requests.some((r) => r.startsWith(`PUT /lake/${PREFIX}_lake_probe/`))).toBe(true);
  });

  it('checkLake passes against a lake that already holds a night (the preflight of the next run)', async () => {
    await writeLayout(wh);
    await syncLake(wh, URL_, { env: s3.env });
    const keys = await listKeys(s3);
    expect(keys.length).toBeGreaterThan(1);
    await expect(checkLake(URL_, s3.env)).resolves.toMatchObject({ url: `s3://lake/${PREFIX}` });
    expect(await listKeys(s3)).toEqual(keys);
  });

  it('a bad address gives ETL_LAKE_UNREACHABLE, saying where, without the secret', async () => {
    const port = await deadPort();
    const env = { ...s3.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`, AWS_SECRET_ACCESS_KEY: 'very-secret-value' };
    const err = await checkLake(URL_, env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EtlError);
    expect((err as EtlError).code).toBe('ETL_LAKE_UNREACHABLE');
    expect((err as EtlError).retryable).toBe(true);
    expect((err as EtlError).message).toContain(`127.0.0.1:${port}`);
    expect((err as EtlError).message).toContain('ECONNREFUSED');
    expect(JSON.stringify({ m: (err as Error).message, c: (err as EtlError).context })).not.toContain('very-secret-value');
  });

  it('refused credentials give ETL_LAKE_REFUSED from the real server, without the key id or secret', async () => {
    const env = { ...s3.env, AWS_ACCESS_KEY_ID: 'AKIAUNKNOWNKEY123', AWS_SECRET_ACCESS_KEY: 'wrong-secret-value' };
    const err = (await checkLake(URL_, env).catch((e: unknown) => e)) as EtlError;
    expect(err.code).toBe('ETL_LAKE_REFUSED');
    expect(err.message).toContain('InvalidAccessKeyId');
    expect(err.message).toContain('HTTP 403');
    expect(err.message).toContain('AWS_ACCESS_KEY_ID');
    const text = JSON.stringify({ m: err.message, c: err.context, cause: String(err.cause) });
    expect(text).not.toContain('AKIAUNKNOWNKEY123');
    expect(text).not.toContain('wrong-secret-value');
    // syncLake stops the same way before uploading anything.
    await writeLayout(wh, { tables: ['ledger'] });
    await expect(syncLake(wh, URL_, { env })).rejects.toMatchObject({ code: 'ETL_LAKE_REFUSED' });
    expect(writes(s3.requests)).toEqual([]);
  });

  it('a missing bucket gives ETL_LAKE_CONFIG', async () => {
    await expect(checkLake('s3://no-such-bucket/x', s3.env)).rejects.toMatchObject({
      code: 'ETL_LAKE_CONFIG',
      message: expect.stringContaining('NoSuchBucket'),
    });
  });
});

describe('a wrong secret (s3rver does not verify V4 signatures, so a loopback stub answers as S3 does)', () => {
  let server: Server;
  let endpoint: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.statusCode = 403;
      res.setHeader('content-type', 'application/xml');
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message></Error>',
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('is ETL_LAKE_REFUSED with what to check', async () => {
    const env = { AWS_ENDPOINT_URL: endpoint, AWS_ACCESS_KEY_ID: 'AKIAGOODKEYID0000', AWS_SECRET_ACCESS_KEY: 'not-the-secret-1234' };
    const err = (await checkLake(URL_, env).catch((e: unknown) => e)) as EtlError;
    expect(err.code).toBe('ETL_LAKE_REFUSED');
    expect(err.message).toContain('SignatureDoesNotMatch');
    expect(err.message).not.toContain('not-the-secret-1234');
  });
});
