import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { CallbackLanding, type LandedCallback } from '../../../src/collect/land-callback.js';
import { TaskLoader } from '../../../src/collect/load-batcher.js';
import { checkpointIfHeld, heldRowsBound, heldRowsBytes, type Warehouse } from '../../../src/warehouse/index.js';
import { compactFixture, land, response, tempWarehouse } from '../warehouse/helpers.js';

const IDS = ['11111111-2222-4333-8444-000000000001', '11111111-2222-4333-8444-000000000002'];

/** Lands a `task_get` answer for each id (the client's landing, as pull has it before the loader). */
async function landTasks(wh: Warehouse, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const env = JSON.parse(await compactFixture('serp.task_get.advanced.small.json'));
    env.tasks[0].id = id;
    await land(wh, response(`/v3/serp/engA/organic/task_get/advanced/${id}`, JSON.stringify(env)));
  }
}

const resultRows = async (wh: Warehouse) => (await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM serp_results`))[0]!.n;

describe('TaskLoader batching (real DuckDB)', () => {
  let wh: Warehouse;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, done } = await tempWarehouse()));
  afterEach(async () => done());

  it('lets a lone task wait for company, and loads it at once when the collector flushes', async () => {
    await landTasks(wh, IDS.slice(0, 1));
    const loader = new TaskLoader(wh, 'run-1', () => new Date(), { minBatch: 2, lingerMs: 60_000 });
    loader.fetched(IDS[0]!);
    await loader.changed(300);
    expect(loader.totals.collected).toBe(0);
    expect(loader.waiting).toBe(1);
    await loader.idle();
    expect(loader.totals.collected).toBe(1);
    expect(await resultRows(wh)).toBe(1);
  });

  it('starts a load as soon as a batch is full', async () => {
    await landTasks(wh, IDS);
    const loader = new TaskLoader(wh, 'run-1', () => new Date(), { minBatch: 2, lingerMs: 60_000 });
    for (const id of IDS) loader.fetched(id);
    while (loader.totals.collected < 2) await loader.changed(5000);
    expect(await resultRows(wh)).toBe(2);
  });

  it('loads a lone task once it has waited the linger time', async () => {
    await landTasks(wh, IDS.slice(0, 1));
    const loader = new TaskLoader(wh, 'run-1', () => new Date(), { minBatch: 500, lingerMs: 50 });
    loader.fetched(IDS[0]!);
    const until = Date.now() + 10_000;
    while (loader.totals.collected < 1 && Date.now() < until) await loader.changed(1000);
    expect(loader.totals.collected).toBe(1);
  });

  it('leaves a task whose answer is not in the raw index uncollected (load_failed, for pull to fetch again), and collects the rest', async () => {
    await landTasks(wh, IDS.slice(0, 1)); // the second task's answer never landed
    const loader = new TaskLoader(wh, 'run-1', () => new Date(), { minBatch: 2, lingerMs: 60_000 });
    for (const id of IDS) loader.fetched(id);
    await loader.idle();
    expect(loader.totals.collected).toBe(1);
    expect(loader.inFlight.get(IDS[0]!)?.state).toBe('collected');
    expect(loader.inFlight.get(IDS[1]!)?.state).toBe('load_failed');
    expect(loader.totals.errors).toEqual(['1 fetched tasks had no landed answer in the raw index; they are fetched again']);
    expect(await resultRows(wh)).toBe(1);
  });

  it('checkpoints after a load once DuckDB holds more uncheckpointed rows than its bound, and not below it', async () => {
    await landTasks(wh, IDS);
    const below = new TaskLoader(wh, 'run-1', () => new Date(), { minBatch: 1, lingerMs: 0, checkpointBytes: 1024 ** 3 });
    below.fetched(IDS[0]!);
    await below.idle();
    expect(below.totals.checkpoints).toBe(0);
    const held = await heldRowsBytes(wh);
    expect(held).toBeGreaterThan(0);
    const past = new TaskLoader(wh, 'run-1', () => new Date(), { minBatch: 1, lingerMs: 0, checkpointBytes: 1 });
    past.fetched(IDS[1]!);
    await past.idle();
    expect(past.totals.collected).toBe(1);
    expect(past.totals.checkpoints).toBe(1);
    // What stays in memory is the loads' own scratch, not the rows: less than one task's rows held before.
    expect(await heldRowsBytes(wh)).toBeLessThan(held);
    expect(await resultRows(wh)).toBe(2);
  });
});

describe('TaskLoader compacts loaded callbacks as the night goes on (real DuckDB)', () => {
  let wh: Warehouse;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, done } = await tempWarehouse()));
  afterEach(async () => done());

  const ID = (n: number) => `11111111-2222-4333-8444-00000000010${n}`;
  /** Postbacks landed at once share one file; each call here is one group. */
  async function landTogether(landing: CallbackLanding, ns: number[]): Promise<LandedCallback[]> {
    const body = JSON.parse(await compactFixture('serp.task_get.advanced.small.json'));
    return Promise.all(
      ns.map((n) => {
        body.tasks[0].id = ID(n);
        return landing.land({
          taskId: ID(n),
          path: `/v3/serp/engA/organic/task_get/advanced/${ID(n)}`,
          endpointId: 'serp.engA.organic.task_get.advanced',
          body: JSON.stringify(body),
          receivedAt: new Date('2026-11-20T09:01:00Z'),
        });
      }),
    );
  }
  const filesOf = async () =>
    new Map((await wh.all<{ id: string; file: string }>(`SELECT task_ids[1] AS id, file FROM raw_responses`)).map((r) => [r.id, r.file]));

  it('joins the files whose callbacks are all loaded, and leaves a file one of whose callbacks is still to load', async () => {
    const landing = new CallbackLanding(wh.dir, { runId: 'run-1', pipeline: 'test' });
    // The first of three at once is written alone; the two that came during its write share the next file.
    const [b1, a1, a2] = await landTogether(landing, [3, 1, 2]);
    const [c1] = await landTogether(landing, [4]);
    expect([a1!.filePeers, a2!.filePeers, b1!.filePeers, c1!.filePeers]).toEqual([2, 2, 1, 1]);
    expect(a1!.file).toBe(a2!.file);
    const loader = new TaskLoader(wh, 'run-1', () => new Date(), { minBatch: 3, lingerMs: 60_000, compactEvery: 2 });
    // The heap's garbage goes with each compaction: a forced full collection (collectGarbage).
    const forced: number[] = [];
    const gcs = new PerformanceObserver((l) => {
      for (const e of l.getEntries())
        if (((e as unknown as { detail?: { flags?: number } }).detail?.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED)
          forced.push(1);
    });
    gcs.observe({ entryTypes: ['gc'] });
    for (const c of [a1!, b1!, c1!]) loader.landed(c);
    while (loader.totals.collected < 3) await loader.changed(5000);
    // b1's and c1's files joined; a1's waits for a2, which comes later and is indexed by its file's name.
    expect(loader.totals.segments).toBe(1);
    await new Promise((r) => setTimeout(r, 50)); // gc entries are delivered after the collection
    gcs.disconnect();
    expect(forced.length).toBeGreaterThan(0);
    let files = await filesOf();
    expect(files.get(ID(3))).toMatch(/\.seg-/);
    expect(files.get(ID(4))).toBe(files.get(ID(3)));
    expect(files.get(ID(1))).not.toMatch(/\.seg-/);
    expect(existsSync(b1!.file) || existsSync(c1!.file)).toBe(false);
    loader.landed(a2!);
    await loader.idle();
    expect(loader.totals.collected).toBe(4);
    expect(loader.totals.errors).toEqual([]);
    expect(loader.totals.damaged).toEqual([]);
    files = await filesOf();
    expect(files.get(ID(2))).toBe(files.get(ID(1)));
    expect(existsSync(join(wh.dir, files.get(ID(2))!))).toBe(true);
    expect(await resultRows(wh)).toBe(4);
  });

  it("with compactEvery 0 leaves every file to the run's end", async () => {
    const landing = new CallbackLanding(wh.dir, { runId: 'run-1', pipeline: 'test' });
    const cs = [...(await landTogether(landing, [1])), ...(await landTogether(landing, [2])), ...(await landTogether(landing, [3]))];
    const loader = new TaskLoader(wh, 'run-1', () => new Date(), { minBatch: 1, lingerMs: 0, compactEvery: 0 });
    for (const c of cs) loader.landed(c);
    await loader.idle();
    expect(loader.totals.collected).toBe(3);
    expect(loader.totals.segments).toBe(0);
    expect([...(await filesOf()).values()].some((f) => f.includes('.seg-'))).toBe(false);
  });
});

describe('PIPELINE_CHECKPOINT_MB', () => {
  it('is 128 MB by default, 0 turns it off, and anything but a number of MB is refused', () => {
    expect(heldRowsBound({})).toBe(128 * 1048576);
    expect(heldRowsBound({ PIPELINE_CHECKPOINT_MB: '64' })).toBe(64 * 1048576);
    expect(heldRowsBound({ PIPELINE_CHECKPOINT_MB: '0' })).toBe(0);
    expect(() => heldRowsBound({ PIPELINE_CHECKPOINT_MB: 'lots' })).toThrow(/PIPELINE_CHECKPOINT_MB/);
    expect(() => heldRowsBound({ PIPELINE_CHECKPOINT_MB: '-1' })).toThrow(/PIPELINE_CHECKPOINT_MB/);
  });
});

describe('checkpointIfHeld (real DuckDB)', () => {
  let wh: Warehouse;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, done } = await tempWarehouse()));
  afterEach(async () => done());

  /** About 20 MB of rows committed in small inserts (held uncompressed until a checkpoint), and a table another connection updates. */
  async function hold(): Promise<void> {
    await wh.run(`CREATE TABLE t (i BIGINT, s VARCHAR)`);
    await wh.run(`CREATE TABLE marks (i BIGINT)`);
    await wh.run(`INSERT INTO marks VALUES (1)`);
    for (let k = 0; k < 100_000; k += 10_000)
      await wh.run(`INSERT INTO t SELECT i, repeat('x', 200) || i FROM range(${k}, ${k + 10_000}) AS r(i)`);
  }
  const cached = async () =>
    Number(
      (
        await wh.all<{ b: number }>(
          `SELECT coalesce(sum(memory_usage_bytes), 0)::DOUBLE AS b FROM duckdb_memory() WHERE tag = 'BASE_TABLE'`,
        )
      )[0]!.b,
    );

  it('does nothing below the bound, and above it writes the rows and drops the blocks it wrote from the cache', async () => {
    await hold();
    const held = await heldRowsBytes(wh);
    expect(held).toBeGreaterThan(10 * 2 ** 20);
    expect(await checkpointIfHeld(wh, held + 2 ** 20)).toBe(false);
    expect(await heldRowsBytes(wh)).toBe(held);
    expect(await checkpointIfHeld(wh, 2 ** 20, { unlessBelow: 2 ** 20, headroomBytes: 2 ** 20 })).toBe(true);
    expect(await heldRowsBytes(wh)).toBeLessThan(2 ** 20);
    // The checkpoint wrote several MB of blocks (a night's, hundreds); they are not kept loaded.
    expect(await cached()).toBeLessThan(2 ** 20);
    expect(await wh.all(`SELECT count(*)::INT AS n FROM t`)).toEqual([{ n: 100_000 }]);
  });

  it("tries again while another connection's open update makes DuckDB refuse, and writes once it commits", async () => {
    await hold();
    const other = await wh.sibling();
    try {
      await other.run('BEGIN TRANSACTION');
      await other.run('UPDATE marks SET i = 2');
      // Refused as long as the update is open (DuckDB's refusal, after every pause).
      await expect(checkpointIfHeld(wh, 2 ** 20)).rejects.toThrow(/Cannot CHECKPOINT/);
      expect(await heldRowsBytes(wh)).toBeGreaterThan(10 * 2 ** 20);
      // Committed during the pauses: a later try goes through.
      const trying = checkpointIfHeld(wh, 2 ** 20);
      await new Promise((r) => setTimeout(r, 100));
      await other.run('COMMIT');
      expect(await trying).toBe(true);
    } finally {
      other.close();
    }
    expect(await heldRowsBytes(wh)).toBeLessThan(2 ** 20);
    expect(await wh.all(`SELECT i::INT AS i FROM marks`)).toEqual([{ i: 2 }]);
  });
});
