import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { deadPort, gatedProxy, getBytes, listKeys, startS3, type LocalS3 } from './lake-helpers.js';
import { movingClock, pipelineCli, silentLogger, tempDir } from './helpers.js';

const FILE = 'pipelines/keywords.yaml';

describe('a run publishes to the lake (real s3rver on loopback), and a bad lake stops it before anything is bought', () => {
  let sandbox: SandboxHandle;
  let s3: LocalS3;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  const now = movingClock('2026-11-20T03:00:00Z');

  beforeAll(async () => {
    tmp = await tempDir('run-lake-');
    s3 = await startS3(join(tmp.dir, 's3'));
    sandbox = await startSandbox({ seed: 8, now, readyAfterMs: 50 });
  });
  afterAll(async () => {
    await sandbox.close();
    await s3.close();
    await tmp.cleanup();
  });

  const run = async (lake: string, env: Record<string, string>) =>
    runPipeline({
      pipeline: await loadPipeline(FILE),
      file: FILE,
      warehouseDir: join(tmp.dir, 'wh'),
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testlakerun1',
      logger: silentLogger,
      pollIntervalMs: 50,
      now,
      lake,
      env: { ...process.env, ...env },
    });

  it('refuses a lake nobody answers at, or with refused credentials, before any call to the service', async () => {
    const calls = sandbox.log.length;
    const dead = `http://127.0.0.1:${await deadPort()}`;
    await expect(run(`s3://${s3.bucket}/nightly`, { ...s3.env, AWS_ENDPOINT_URL: dead })).rejects.toMatchObject({
      code: 'ETL_LAKE_UNREACHABLE',
    });
    await expect(run(`s3://${s3.bucket}/nightly`, { ...s3.env, AWS_ACCESS_KEY_ID: 'NOBODY' })).rejects.toMatchObject({
      code: 'ETL_LAKE_REFUSED',
    });
    expect(sandbox.log.length).toBe(calls);
  });

  it('holds the warehouse while it mirrors: an export started meanwhile finds it held, and cannot rewrite parquet/ under the upload', async () => {
    const proxy = await gatedProxy(s3.endpoint, (req) => req.method === 'PUT' && (req.url ?? '').includes('/parquet/'));
    try {
      const running = run(`s3://${s3.bucket}/held`, { ...s3.env, AWS_ENDPOINT_URL: proxy.endpoint });
      await proxy.held; // the lake step is uploading
      const wh = join(tmp.dir, 'wh');
      const exported = await pipelineCli(['export', '--warehouse', wh], { ...process.env, PIPELINE_LOCK_WAIT_SECONDS: '0' });
      expect(exported.code).toBe(7);
      expect(exported.stderr).toMatch(/warehouse\.duckdb is held by/);
      proxy.release();
      const out = await running;
      expect(out.lake && 'uploaded' in out.lake ? out.lake.failed : ['no outcome']).toEqual([]);
      expect(out.stepsMs?.lake).toBeGreaterThan(0);
    } finally {
      proxy.release();
      await proxy.close();
    }
  });

  it('mirrors the published tables and marts, and the serving catalog, to the lake after the run', async () => {
    const out = await run(`s3://${s3.bucket}/nightly`, s3.env);
    expect(out.state).toBe('completed');
    expect(out.lake && 'uploaded' in out.lake ? out.lake.failed : ['no outcome']).toEqual([]);
    const keys = await listKeys(s3, 'nightly/');
    for (const table of ['serp_items', 'ledger', 'rank_history', 'spend_daily']) {
      expect(keys.some((k) => k.startsWith(`nightly/parquet/${table}/date=`) && k.endsWith('.parquet'))).toBe(true);
    }
    expect(keys).toContain('nightly/serving.duckdb');
    expect(keys.some((k) => k.includes('warehouse.duckdb') || k.includes('/raw/') || k.includes('serving/'))).toBe(false);

    // The lake's copy, copied down as docs/lake.md says, answers every view as the warehouse's tables.
    const copy = join(tmp.dir, 'lake-copy');
    for (const k of keys) {
      await mkdir(dirname(join(copy, k.slice('nightly/'.length))), { recursive: true });
      await writeFile(join(copy, k.slice('nightly/'.length)), await getBytes(s3, k));
    }
    const tables = ['serp_items', 'serp_results', 'ledger', 'rank_history', 'spend_daily'];
    const counts = async (file: string, search?: string) => {
      const db = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
      const con = await db.connect();
      try {
        if (search) await con.run(`SET file_search_path = '${search}'`);
        const out: Record<string, number> = {};
        for (const t of tables) out[t] = Number((await con.runAndReadAll(`SELECT count(*) FROM ${t}`)).getRows()[0]![0]);
        return out;
      } finally {
        con.closeSync();
        db.closeSync();
      }
    };
    const lake = await counts(join(copy, 'serving.duckdb'), copy);
    const home = await counts(join(tmp.dir, 'wh', 'warehouse.duckdb'));
    expect(lake).toEqual(home);
    expect(lake.serp_items).toBeGreaterThan(0);
  });
});
