import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Warehouse } from '../../../src/warehouse/index.js';
import { duckdbThreads } from '../../../src/warehouse/warehouse.js';
import { tempWarehouse } from './helpers.js';

/** MB of DuckDB's buffer memory by tag (duckdb_memory()). */
async function memory(wh: Warehouse): Promise<Record<string, number>> {
  const rows = await wh.all<{ tag: string; mb: number }>(`SELECT tag, memory_usage_bytes / 2**20 AS mb FROM duckdb_memory()`);
  return Object.fromEntries(rows.map((r) => [r.tag, r.mb]));
}

const limit = async (wh: Warehouse) => (await wh.all<{ v: string }>(`SELECT current_setting('memory_limit') AS v`))[0]!.v;

const N = 200000;
/**
 * N rows of about 200 characters, in inserts of 10,000 as a night's loads commit them: about 40
 * MB that DuckDB holds uncompressed until a checkpoint (one large insert would write full row
 * groups to the file at once).
 */
async function fill(wh: Warehouse, from = 0): Promise<void> {
  for (let k = from; k < from + N; k += 10000)
    await wh.run(`INSERT INTO t SELECT i, repeat(chr(65 + (i % 26)::INT), 200) || i::VARCHAR FROM range(${k}, ${k + 10000}) AS r(i)`);
}
const CHECK = `SELECT count(*)::INT AS n, sum(length(s))::DOUBLE AS chars, sum(i)::DOUBLE AS ids FROM t`;

describe('Warehouse.releaseMemory and Warehouse.checkpoint (real DuckDB)', () => {
  let wh: Warehouse;
  let dir: string;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, dir, done } = await tempWarehouse()));
  afterEach(async () => done());

  it('hands back the rows committed since the last checkpoint and the cached blocks; the rows still read, and the limit is as before', async () => {
    const before = await limit(wh);
    await wh.run(`CREATE TABLE t (i BIGINT, s VARCHAR)`);
    await fill(wh);
    const expected = await wh.all(CHECK);
    const held = await memory(wh);
    expect(held.IN_MEMORY_TABLE ?? 0).toBeGreaterThan(20);

    await wh.releaseMemory();
    const after = await memory(wh);
    expect((after.IN_MEMORY_TABLE ?? 0) + (after.BASE_TABLE ?? 0)).toBeLessThan(2);
    expect(await limit(wh)).toBe(before);
    // The rows come back from DuckDB's temp folder, and the table takes more.
    expect(await wh.all(CHECK)).toEqual(expected);
    await fill(wh, N);
    expect((await wh.all<{ n: number }>(CHECK))[0]!.n).toBe(2 * N);
  });

  it('with a floor, hands back only when DuckDB holds at least that much (a small night is left as it is)', async () => {
    await wh.run(`CREATE TABLE t (i BIGINT, s VARCHAR)`);
    await fill(wh);
    const held = await memory(wh);
    const total = Object.values(held).reduce((a, b) => a + b, 0);
    expect(held.IN_MEMORY_TABLE ?? 0).toBeGreaterThan(20);
    // Above what it holds: nothing handed back, the rows stay in memory.
    expect(await wh.releaseMemory({ unlessBelow: (total + 64) * 2 ** 20 })).toBe(false);
    expect((await memory(wh)).IN_MEMORY_TABLE ?? 0).toBeGreaterThan(20);
    // Below it: handed back as without a floor.
    expect(await wh.releaseMemory({ unlessBelow: 8 * 2 ** 20 })).toBe(true);
    expect((await memory(wh)).IN_MEMORY_TABLE ?? 0).toBeLessThan(2);
    expect(await wh.all<{ n: number }>(CHECK)).toMatchObject([{ n: N }]);
  });

  it('leaves a transaction open on another connection whole, and puts back a limit the user set', async () => {
    wh.close();
    await rm(dir, { recursive: true, force: true });
    process.env.PIPELINE_DUCKDB_MEMORY = '2GB';
    try {
      wh = await Warehouse.open(dir);
    } finally {
      delete process.env.PIPELINE_DUCKDB_MEMORY;
    }
    const before = await limit(wh);
    expect(before).not.toBe(await limitOfDefault());
    await wh.run(`CREATE TABLE t (i BIGINT, s VARCHAR)`);
    const sibling = await wh.sibling();
    try {
      // Uncommitted rows of an open transaction, while another connection releases the memory.
      await sibling.run('BEGIN TRANSACTION');
      await fill(sibling);
      await wh.releaseMemory();
      await sibling.run('COMMIT');
    } finally {
      sibling.close();
    }
    expect(await limit(wh)).toBe(before);
    expect(await wh.all(CHECK)).toEqual([{ n: N, chars: N * 200 + digits(N), ids: ((N - 1) * N) / 2 }]);
  });

  const walBytes = async () => (await stat(join(dir, 'warehouse.duckdb.wal')).catch(() => ({ size: 0 }))).size;

  it('writes the rows of the log into the database file while the warehouse stays open, after a release too', async () => {
    await wh.run(`CREATE TABLE t (i BIGINT, s VARCHAR)`);
    await fill(wh);
    const expected = await wh.all(CHECK);
    const file = (await stat(join(dir, 'warehouse.duckdb'))).size;
    // Below the warehouse's checkpoint threshold, the rows are in the log only.
    expect(await walBytes()).toBeGreaterThan(20 * 2 ** 20);
    await wh.releaseMemory();
    await wh.checkpoint();
    expect(await walBytes()).toBe(0);
    expect((await stat(join(dir, 'warehouse.duckdb'))).size).toBeGreaterThan(file);
    // DuckDB no longer holds them uncompressed, and they read the same.
    expect((await memory(wh)).IN_MEMORY_TABLE ?? 0).toBeLessThan(2);
    expect(await wh.all(CHECK)).toEqual(expected);
  });

  it('drops the table blocks a checkpoint left cached, while another connection writes, and puts the limit back', async () => {
    const before = await limit(wh);
    await wh.run(`CREATE TABLE t (i BIGINT, s VARCHAR)`);
    await fill(wh);
    const expected = await wh.all(CHECK);
    await wh.checkpoint();
    const cached = (await memory(wh)).BASE_TABLE ?? 0;
    expect(cached).toBeGreaterThan(4);
    // A floor above the cache: left as it is.
    expect(await wh.dropCachedBlocks({ unlessBelow: (cached + 8) * 2 ** 20, headroomBytes: 2 ** 20 })).toBe(false);
    expect((await memory(wh)).BASE_TABLE ?? 0).toBe(cached);
    const sibling = await wh.sibling();
    try {
      await sibling.run(`CREATE TABLE u (i BIGINT, s VARCHAR)`);
      await sibling.run('BEGIN TRANSACTION');
      await sibling.run(`INSERT INTO u SELECT i, 'x' || i FROM range(1000) AS r(i)`);
      expect(await wh.dropCachedBlocks({ unlessBelow: 2 ** 20, headroomBytes: 2 ** 20 })).toBe(true);
      await sibling.run(`INSERT INTO u SELECT i, 'y' || i FROM range(1000, 2000) AS r(i)`);
      await sibling.run('COMMIT');
    } finally {
      sibling.close();
    }
    expect((await memory(wh)).BASE_TABLE ?? 0).toBeLessThan(2);
    expect(await limit(wh)).toBe(before);
    expect(await wh.all(CHECK)).toEqual(expected);
    expect(await wh.all(`SELECT count(*)::INT AS n FROM u`)).toEqual([{ n: 2000 }]);
  });
});

/** The memory limit of a warehouse opened without PIPELINE_DUCKDB_MEMORY, as DuckDB prints it. */
async function limitOfDefault(): Promise<string> {
  const { wh, done } = await tempWarehouse();
  try {
    return await limit(wh);
  } finally {
    await done();
  }
}

/** Characters of the decimal numbers below `n`. */
function digits(n: number): number {
  let c = 0;
  for (let i = 0; i < n; i++) c += String(i).length;
  return c;
}

describe('PIPELINE_DUCKDB_THREADS', () => {
  it("sets DuckDB's worker threads when the warehouse opens, and refuses what is not a whole number from 1", async () => {
    expect(duckdbThreads(undefined)).toBeUndefined();
    expect(duckdbThreads('')).toBeUndefined();
    expect(duckdbThreads('3')).toBe('3');
    for (const bad of ['0', 'two', '1.5', '-1', ' 2']) expect(() => duckdbThreads(bad)).toThrow(/PIPELINE_DUCKDB_THREADS=.*whole number from 1/);
    const was = process.env.PIPELINE_DUCKDB_THREADS;
    process.env.PIPELINE_DUCKDB_THREADS = '3';
    try {
      const { wh, done } = await tempWarehouse();
      try {
        expect(await wh.all(`SELECT current_setting('threads')::INT AS n`)).toEqual([{ n: 3 }]);
      } finally {
        await done();
      }
    } finally {
      if (was === undefined) delete process.env.PIPELINE_DUCKDB_THREADS;
      else process.env.PIPELINE_DUCKDB_THREADS = was;
    }
  });
});
