import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LAKE_CATALOG, publishServing } from '../../../src/warehouse/publish/serving-catalog.js';

const FILE = 'serp_items/date=2026-01-01/part-0.parquet';
const keep = { generations: 2, hours: 24 };

/** A warehouse folder with one published file of `rows` rows, as the publish leaves it. */
async function published(dir: string, rows: number, id: string): Promise<void> {
  await mkdir(join(dir, 'parquet', 'serp_items', 'date=2026-01-01'), { recursive: true });
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  await c.run(`COPY (SELECT i AS rank_absolute FROM range(${rows}) t(i)) TO '${join(dir, 'parquet', FILE)}' (FORMAT parquet)`);
  c.closeSync();
  db.closeSync();
  await publishServing(dir, 1, [{ table: 'serp_items', file: FILE }], keep, id);
}

async function read(catalog: string, searchPath: string): Promise<{ n: number; date: string }> {
  const db = await DuckDBInstance.create(catalog, { access_mode: 'READ_ONLY' });
  try {
    const c = await db.connect();
    await c.run(`SET file_search_path = '${searchPath}'`);
    const r = await c.runAndReadAll(`SELECT count(*)::INT AS n, min(date)::VARCHAR AS date FROM serp_items`);
    c.closeSync();
    return r.getRowObjectsJS()[0] as { n: number; date: string };
  } finally {
    db.closeSync();
  }
}

describe('the serving catalogs', () => {
  let root: string;
  const cwd = process.cwd();
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'serving-'));
  });
  afterEach(async () => {
    process.chdir(cwd);
    await rm(root, { recursive: true, force: true });
  });

  it("a reader started in another warehouse's folder reads this warehouse's snapshot, never the other's of the same number", async () => {
    const a = join(root, 'a');
    const b = join(root, 'b');
    await published(a, 3, 'aaaaaa');
    await published(b, 5, 'bbbbbb');
    // DuckDB looks for a relative path in the working folder before file_search_path.
    process.chdir(b);
    expect(await read(join(a, 'serving.duckdb'), a)).toEqual({ n: 3, date: '2026-01-01' });
    expect(await read(join(b, 'serving.duckdb'), b)).toEqual({ n: 5, date: '2026-01-01' });
  });

  it("the lake's catalog reads parquet/ (the keys the lake holds), not the snapshots that stay home", async () => {
    const a = join(root, 'a');
    await published(a, 3, 'aaaaaa');
    // A copy of only what the lake holds: parquet/ and the lake catalog as serving.duckdb.
    const lake = join(root, 'lake');
    await mkdir(lake);
    const { cp } = await import('node:fs/promises');
    await cp(join(a, 'parquet'), join(lake, 'parquet'), { recursive: true });
    await cp(join(a, 'serving', LAKE_CATALOG), join(lake, 'serving.duckdb'));
    expect(await read(join(lake, 'serving.duckdb'), lake)).toEqual({ n: 3, date: '2026-01-01' });
  });
});
