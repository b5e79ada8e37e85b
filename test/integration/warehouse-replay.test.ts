import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import yargs from 'yargs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCommand } from '../../src/cli/commands/export.js';
import { replayCommand } from '../../src/cli/commands/replay.js';
import { loadPipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger, tempDir } from './helpers.js';

const DAY = '2026-11-20T09:00:00Z';
const TABLES = ['serp_results', 'serp_items', 'search_volume', 'search_volume_monthly', 'tasks', 'ledger'];

async function cli(argv: string[]): Promise<string> {
  const out: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
  try {
    await yargs(argv).command(replayCommand).command(exportCommand).strict().parseAsync();
  } finally {
    process.stdout.write = write;
  }
  expect(process.exitCode ?? 0).toBe(0);
  process.exitCode = undefined;
  return out.join('');
}

async function rows(dir: string): Promise<unknown[][]> {
  return withWarehouse(dir, (wh) => Promise.all(TABLES.map((t) => wh.all(`SELECT * FROM ${t} ORDER BY ALL`))));
}

describe('pipeline replay and export on emulator bodies (loopback)', () => {
  let sandbox: SandboxHandle;
  let wh: { dir: string; cleanup: () => Promise<void> };
  let calls = 0;

  beforeAll(async () => {
    const now = movingClock(DAY);
    sandbox = await startSandbox({ seed: 11, now, readyAfterMs: 100 });
    wh = await tempDir();
    const pipeline = await loadPipeline('pipelines/keywords.yaml');
    await runPipeline({
      pipeline,
      file: 'pipelines/keywords.yaml',
      warehouseDir: wh.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_sandbox_demo',
      logger: silentLogger,
      pollIntervalMs: 50,
      collectTimeoutMs: 30_000,
      now,
    });
    calls = sandbox.log.length;
  });

  afterAll(async () => {
    await sandbox.close();
    await wh.cleanup();
  });

  it('rebuilds the typed tables from the raw landing alone, row for row, with no call to the service', async () => {
    const before = await rows(wh.dir);
    expect((before[1] as unknown[]).length).toBeGreaterThan(0);
    await withWarehouse(wh.dir, async (db) => {
      await db.run('DELETE FROM serp_items');
      await db.run('DELETE FROM serp_results');
      await db.run('DELETE FROM search_volume');
      await db.run('DELETE FROM search_volume_monthly');
    });
    const out = JSON.parse(await cli(['replay', '--warehouse', wh.dir, '--json']));
    // The two job kinds of keywords.yaml, and the SERP places lists its preflight read (landed as every answer is).
    expect(out.kinds).toEqual(['search_volume', 'serp', 'serp_eng_a_languages', 'serp_eng_a_locations']);
    expect(out.skippedFiles).toEqual([]);
    expect(await rows(wh.dir)).toEqual(before);
    expect(sandbox.log.length).toBe(calls);
    // replay compacted the one-response files into one segment per kind and day (a kind of one file stays as it is)
    const day = (await readdir(join(wh.dir, 'raw')))[0]!;
    const files = await readdir(join(wh.dir, 'raw', day));
    const kinds = [...new Set(files.map((f) => f.split('--')[0]!))];
    for (const k of kinds) {
      const of = files.filter((f) => f.startsWith(`${k}--`));
      if (of.length > 1 || k === 'serp' || k === 'search_volume')
        expect(
          of.every((f) => f.includes('.seg-')),
          k,
        ).toBe(true);
    }
    expect(files.filter((f) => f.startsWith('serp--')).length).toBe(1);
  });

  it('export rewrites Parquet so each folder equals its table, readable with hive partitioning', async () => {
    await cli(['export', '--warehouse', wh.dir]);
    await cli(['export', '--warehouse', wh.dir]);
    await withWarehouse(wh.dir, async (db) => {
      for (const t of ['serp_items', 'ledger', 'raw_responses']) {
        const [p] = await db.all<{ n: number }>(
          `SELECT count(*)::INT AS n FROM read_parquet('${join(wh.dir, 'parquet', t)}/*/*.parquet', hive_partitioning = true)`,
        );
        const [d] = await db.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ${t}`);
        expect(p, t).toEqual(d);
      }
      const days = await db.all(
        `SELECT DISTINCT date::VARCHAR AS d FROM read_parquet('${join(wh.dir, 'parquet', 'serp_items')}/*/*.parquet', hive_partitioning = true)`,
      );
      expect(days).toEqual([{ d: '2026-11-20' }]);
    });
  });
});
