import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compactRaw, loadLanded, reindexRaw, replay, type Warehouse } from '../../../src/warehouse/index.js';
import { byteBatches } from '../../../src/warehouse/normalize/byte-batches.js';
import { gzipSync } from 'node:zlib';
import { LOAD_BATCH_BYTES, noteBodyReaders, readsDirect, startEarly } from '../../../src/warehouse/load/batches.js';
import { compactFixture, land, response, tempWarehouse } from './helpers.js';

// Reindexing, replaying and loading read the landed files a batch at a time (memory bounded by
// a batch, not by a night or a history). These tests shrink the batch to a byte, so every file
// is its own batch, and check that the index, the ledger and the typed tables come out as a
// single read of everything gives them.

const taskId = (i: number) => `11111111-2222-4333-8444-${String(i).padStart(12, '0')}`;
const serpPath = (i: number) => `/v3/serp/engA/organic/task_get/advanced/${taskId(i)}`;

async function serpBody(i: number, items?: number): Promise<string> {
  const env = JSON.parse(await compactFixture('serp.task_get.advanced.small.json'));
  env.tasks[0].id = taskId(i);
  env.tasks[0].data.keyword = `keyword ${i}`;
  if (items !== undefined) env.tasks[0].result[0].items = env.tasks[0].result[0].items.slice(0, items);
  return JSON.stringify(env);
}

/** Lands `n` SERP task_get bodies (one file each), a free tasks_ready, a charged POST and a body that is not JSON; loads them. */
async function night(wh: Warehouse, n: number): Promise<string[]> {
  const responses = [];
  for (let i = 0; i < n; i++) {
    responses.push(response(serpPath(i), await serpBody(i), { receivedAt: new Date(Date.UTC(2026, 10, 20, 9, 0, i)) }));
  }
  responses.push(response('/v3/serp/engA/organic/tasks_ready', '{"status_code":20000,"tasks":[]}'));
  responses.push(response('/v3/serp/engA/organic/task_post', '{"status_code":20000,"tasks":[]}', { method: 'POST', tasksSent: 3, charge: { requestId: 'req-post', chargeCny: '0.0129', costUsd: '0.0018', balanceCny: '99.5' } }));
  responses.push(response(serpPath(n), 'not json at all'));
  const ids = await land(wh, ...responses);
  await loadLanded(wh, { callIds: ids });
  return ids;
}

interface State { index: unknown[]; ledger: unknown[]; results: unknown[]; items: unknown[] }

async function state(wh: Warehouse): Promise<State> {
  return {
    index: await wh.all(`SELECT call_id, run_id, endpoint_id, path, http_status, request_id, kind, parsed, task_ids, shape, file, received_at::VARCHAR AS at FROM raw_responses ORDER BY call_id`),
    ledger: await wh.all(`SELECT * EXCLUDE (called_at), called_at::VARCHAR AS at FROM ledger ORDER BY call_id`),
    results: await wh.all(`SELECT * FROM serp_results ORDER BY ALL`),
    items: await wh.all(`SELECT * FROM serp_items ORDER BY ALL`),
  };
}

/** The database loses its index, ledger and typed rows; only the raw files are left. */
async function loseDatabase(wh: Warehouse): Promise<void> {
  for (const t of ['raw_responses', 'ledger', 'serp_results', 'serp_items']) await wh.run(`DELETE FROM ${t}`);
}

describe('reindex, replay and load, a batch of files at a time (real DuckDB in a temp folder)', () => {
  let wh: Warehouse;
  let dir: string;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, dir, done } = await tempWarehouse()));
  afterEach(async () => done());

  it('reads a batch from the landed files when it is small or made of small files only, else inflates it; never when told 0', () => {
    const night = Array.from({ length: 10_000 }, () => ({ size: 8_000 })); // a million SERP items in one-answer files
    expect(readsDirect(night, 8 << 20)).toBe(true);
    expect(readsDirect(night.slice(0, 10), 8 << 20)).toBe(true);
    expect(readsDirect([{ size: 80 << 20 }], 8 << 20)).toBe(false); // a compacted segment of that night
    expect(readsDirect([...night.slice(0, 10), { size: 80 << 20 }], 8 << 20)).toBe(false);
    expect(readsDirect([{ size: 4 << 20 }], 8 << 20)).toBe(true);
    expect(readsDirect(night.slice(0, 10), 0)).toBe(false); // the reload from plain text after a short read
  });

  it('reads even a large segment from the landed files when at most one table of its kind reads the bodies (the others read the heads)', () => {
    const segment = [{ size: 80 << 20 }];
    expect(readsDirect(segment, 8 << 20, 1)).toBe(true); // serp_items reads the bodies, serp_results the heads
    expect(readsDirect(segment, 8 << 20, 0)).toBe(true); // every table reads the heads
    expect(readsDirect(segment, 8 << 20, 2)).toBe(false); // a reindexed warehouse: both tables parse the bodies, inflated once
    expect(readsDirect(segment, 0, 1)).toBe(false); // the reload from plain text after a short read, whatever reads it
  });

  it('batches files in order up to a byte budget, a larger file alone', () => {
    const xs = [5, 5, 20, 1, 1, 1, 9].map((size, i) => ({ i, size }));
    expect(byteBatches(xs, 10).map((b) => b.map((x) => x.i))).toEqual([[0, 1], [2], [3, 4, 5], [6]]);
    expect(byteBatches([], 10)).toEqual([]);
  });

  it('replay over many files, one per batch or several, rebuilds the same index, ledger and tables', async () => {
    await night(wh, 12);
    const before = await state(wh);
    expect((before.items as unknown[]).length).toBe(36);
    // Each batch read from the landed files or from one inflated scratch file (0); 1: every batch is
    // over the size for reading directly, but made of small files only, so read directly too.
    for (const readDirectBelow of [0, 1, 1 << 30]) {
      for (const batchBytes of [1, 4000, 1 << 30]) {
        await loseDatabase(wh);
        const report = await replay(wh, { batchBytes, readDirectBelow });
        expect(report.reindexed).toBe(15);
        expect(await state(wh)).toEqual(before);
      }
    }
  });

  it('keeps the newest response of a task fetched twice when its two bodies are read in different batches', async () => {
    await night(wh, 3);
    const newer = await land(wh, response(serpPath(1), await serpBody(1, 1), { receivedAt: new Date('2026-11-21T09:00:00Z') }));
    await loadLanded(wh, { callIds: newer });
    const before = await state(wh);
    const [one] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM serp_items WHERE task_id = $1`, [taskId(1)]);
    expect(one!.n).toBe(1);
    await loseDatabase(wh);
    await replay(wh, { batchBytes: 1 });
    expect(await state(wh)).toEqual(before);
  });

  it('a load reading its files in several batches replaces a reloaded task once and counts its rows', async () => {
    const ids = await night(wh, 6);
    const before = await state(wh);
    const report = await loadLanded(wh, { taskIds: [0, 1, 2, 3, 4, 5].map(taskId) }, undefined, { batchBytes: 1 });
    expect(report.rows).toEqual(new Map([['serp_items', 18], ['serp_results', 6]]));
    expect(report.perTask.get(taskId(4))).toBe(4);
    expect(await state(wh)).toEqual(before);
    expect(ids).toHaveLength(9);
  });

  it('counts a body found in two files once (a segment written by a compaction killed before it re-pointed the index)', async () => {
    await night(wh, 4);
    const before = await state(wh);
    // What compactRaw writes before it updates the index: the small files, end to end, as a segment.
    const day = join(dir, 'raw', '2026-11-20');
    const small = (await readdir(day)).filter((f) => f.startsWith('serp--')).sort();
    expect(small).toHaveLength(4);
    const bytes = await Promise.all(small.map((f) => readFile(join(day, f))));
    await writeFile(join(day, 'serp--run-1.seg-00000000.ndjson.gz'), Buffer.concat(bytes));
    // Read inflated, as gzip in place, and as gzip with the segment cut into one piece per body.
    for (const [batchBytes, readDirectBelow, pieceBytes] of [[1, 0, undefined], [1 << 30, 0, undefined], [1, 1 << 30, undefined], [1 << 30, 1 << 30, undefined], [1 << 30, 1 << 30, 1]] as const) {
      await loseDatabase(wh);
      await replay(wh, { batchBytes, readDirectBelow, pieceBytes });
      const after = await state(wh);
      // Each body counts once: the same calls, ledger rows and typed rows; the index names the first file by name.
      expect((after.index as { call_id: string }[]).map((r) => r.call_id)).toEqual((before.index as { call_id: string }[]).map((r) => r.call_id));
      expect(after.ledger).toEqual(before.ledger);
      expect(after.items).toEqual(before.items);
      expect(after.results).toEqual(before.results);
    }
  });

  it('indexes only the files the index does not name, and a second reindex adds nothing', async () => {
    await night(wh, 5);
    const before = await state(wh);
    await compactRaw(wh);
    const compacted = await state(wh);
    expect(compacted.ledger).toEqual(before.ledger);
    // A night landed after the index was lost in part: its files are the only ones read.
    const day = join(dir, 'raw', '2026-11-20');
    const seg = (await readdir(day)).find((f) => f.includes('.seg-'))!;
    await copyFile(join(day, seg), join(day, seg.replace('.seg-', '.seg-copy-')));
    await wh.run(`DELETE FROM raw_responses WHERE kind = 'serp'`);
    expect(await reindexRaw(wh, undefined, { batchBytes: 1 })).toBe(5);
    expect(await reindexRaw(wh, undefined, { batchBytes: 1 })).toBe(0);
    expect(await state(wh)).toEqual(compacted);
  });

  it("cuts a large first batch ahead as the kind's last load planned its reads (one table reading the bodies when none yet), not when two do", async () => {
    // One landed file of more than a MiB of gzip: a large batch (readDirectBelow 1), not small files only.
    const file = join('raw', '2026-11-20', 'cut-test--run-1.seg-00000000.ndjson.gz');
    await mkdir(join(dir, 'raw', '2026-11-20'), { recursive: true });
    const line = JSON.stringify({ call_id: 'c1', body: randomBytes(2_400_000).toString('base64') }) + '\n'; // more than a piece
    await writeFile(join(dir, file), gzipSync(line));
    const size = (await readFile(join(dir, file))).length;
    expect(size).toBeGreaterThan(1 << 20);
    const batches = { bytes: LOAD_BATCH_BYTES, readDirectBelow: 1, pieceBytes: undefined };
    const kind = `cut-test-${randomBytes(4).toString('hex')}`;
    // Each start gives the files' sizes (for the batches and the commit), read through or asked.
    const start = async () => {
      const early = startEarly(wh, kind, [file], batches);
      expect(await early.sized!.sizes).toEqual([{ f: file, size }]);
      return early.cut;
    };
    const cut = await start();
    expect(cut?.pieces.scratch).toHaveLength(1);
    expect((await readFile(cut!.pieces.scratch[0]!)).equals(await readFile(join(dir, file)))).toBe(true);
    noteBodyReaders(kind, 2); // a reindexed warehouse: the results parse the bodies too, inflated once
    expect(await start()).toBeUndefined();
    noteBodyReaders(kind, 1);
    const again = await start();
    expect(again?.pieces.scratch).toHaveLength(1);
    // A file that cannot be read: no cut, and sizes that reject with the reason, whichever way they are taken.
    const gone = startEarly(wh, kind, [file, 'raw/2026-11-20/gone.ndjson.gz'], batches);
    await expect(gone.sized!.sizes).rejects.toThrow(/ENOENT/);
    expect(await gone.cut).toBeUndefined();
    noteBodyReaders(kind, 2);
    const goneSized = startEarly(wh, kind, ['raw/2026-11-20/gone.ndjson.gz'], batches);
    await expect(goneSized.sized!.sizes).rejects.toThrow(/ENOENT/);
    expect(await goneSized.cut).toBeUndefined();
    // The pieces are the caller's to remove (a load removes them once read).
    for (const c of [cut, again]) for (const f of c?.pieces.scratch ?? []) await rm(f, { force: true });
  });

  it('a batch cut ahead that the plan inflates instead (no heads: two tables read the bodies) gives the same rows and leaves no scratch file', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const env = JSON.parse(await serpBody(i));
      env.tasks[0].result[0].items[0].title = randomBytes(300_000).toString('base64'); // about 2.4 MB of gzip in all, 3.2 MB of bodies
      ids.push(...(await land(wh, response(serpPath(i), JSON.stringify(env), { receivedAt: new Date(Date.UTC(2026, 10, 20, 9, 0, i)) }))));
    }
    await compactRaw(wh);
    await wh.run('DELETE FROM raw_heads'); // as after a reindex: no heads
    const [{ kind, file }] = (await wh.all<{ kind: string; file: string }>(`SELECT DISTINCT kind, file FROM raw_responses`)) as [{ kind: string; file: string }];
    // A large batch (not small files only): with two tables reading the bodies, it is inflated.
    expect((await readFile(join(dir, file))).length).toBeGreaterThan(1 << 20);
    const rows = async () => wh.all(`SELECT * FROM serp_items ORDER BY ALL`);
    await loadLanded(wh, { callIds: ids }, undefined, { readDirectBelow: 0 });
    const inflated = await rows();
    expect(inflated).toHaveLength(24);
    noteBodyReaders(kind, 1); // expected to be read with one table, as a warehouse with heads is
    const report = await loadLanded(wh, { callIds: ids }, undefined, { readDirectBelow: 1 });
    expect(report.rows.get('serp_items')).toBe(24);
    expect(await rows()).toEqual(inflated);
    expect(await readdir(join(dir, 'tmp')).catch(() => [])).toEqual([]);
  });
});
