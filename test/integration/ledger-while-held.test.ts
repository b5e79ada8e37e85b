import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { pipelineCli, silentLogger, tempDir } from './helpers.js';

const cli = (args: string[], env: Record<string, string> = {}) => pipelineCli(args, { ...process.env, ...env });

const YAML = 'name: spend\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [oak desk, pine desk, teak desk]\n';

// Finance reads the ledger while the nightly run holds warehouse.duckdb (for hours, on a big
// account): `pipeline ledger` answers at once from the last publish, and says so.
describe('pipeline ledger while a run holds the warehouse', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    sandbox = await startSandbox();
    tmp = await tempDir('pipeline-ledger-held-');
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('prints the published ledger at once, every format, and waits as before when nothing was published', async () => {
    const file = join(tmp.dir, 'spend.yaml');
    writeFileSync(file, YAML);
    const wh = join(tmp.dir, 'wh');
    const run = await runPipeline({
      pipeline: parsePipeline(YAML, file, {}),
      file,
      warehouseDir: wh,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testledgerheld',
      logger: silentLogger,
      pollIntervalMs: 50,
    });
    expect(run.state).toBe('completed');
    const calls = await cli(['ledger', '--warehouse', wh, '--format', 'json']);
    const byRun = await cli(['ledger', '--warehouse', wh, '--format', 'json', '--by', 'run']);
    expect(calls.code).toBe(0);
    expect(JSON.parse(calls.stdout).length).toBeGreaterThanOrEqual(2); // the POST and the reads

    await withWarehouse(wh, async () => {
      const held = await cli(['ledger', '--warehouse', wh, '--format', 'json'], { PIPELINE_LOCK_WAIT_SECONDS: '30' });
      expect(held.code).toBe(0);
      expect(held.stderr).toMatch(
        /^warehouse\.duckdb is held by .*: this is the ledger as published at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(publish \d+\); calls made since are not in it/,
      );
      expect(JSON.parse(held.stdout)).toEqual(JSON.parse(calls.stdout));
      const heldByRun = await cli(['ledger', '--warehouse', wh, '--format', 'json', '--by', 'run']);
      expect(JSON.parse(heldByRun.stdout)).toEqual(JSON.parse(byRun.stdout));
      const out = join(tmp.dir, 'ledger.parquet');
      expect((await cli(['ledger', '--warehouse', wh, '--format', 'parquet', '--out', out])).code).toBe(0);
      const db = await (await DuckDBInstance.create(':memory:')).connect();
      const [n] = (await db.runAndReadAll(`SELECT count(*)::INT AS n, sum(charge_cny)::VARCHAR AS cny FROM '${out}'`)).getRowObjectsJS();
      const total = JSON.parse(calls.stdout).reduce((s: number, r: { charge_cny: string | null }) => s + Number(r.charge_cny ?? 0), 0);
      expect(n).toEqual({ n: JSON.parse(calls.stdout).length, cny: expect.any(String) });
      expect(Number(n!.cny)).toBeCloseTo(total, 6);
      db.closeSync();

      // Nothing published to read: it waits for the warehouse, then exits 7.
      renameSync(join(wh, 'serving.duckdb'), join(wh, 'serving.duckdb.away'));
      const waited = await cli(['ledger', '--warehouse', wh, '--format', 'json'], { PIPELINE_LOCK_WAIT_SECONDS: '1' });
      expect(waited.code).toBe(7);
      expect(waited.stderr).toMatch(/is held by/);
    });
  }, 120_000);
});
