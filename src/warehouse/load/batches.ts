import { statSync } from 'node:fs';
import { join } from 'node:path';
import { byteBatches } from '../normalize/byte-batches.js';
import { removeInflated } from '../normalize/inflate.js';
import { cutInPieces, intoPieces, type Pieces } from '../normalize/pieces.js';
import type { Warehouse } from '../warehouse.js';

/*
 * How a load reads a kind's landed files: in batches of bytes, each read as gzip straight from
 * the files (in pieces) or inflated once into a plain scratch file; and the first batch's pieces,
 * cut ahead while DuckDB plans the load.
 */

export type Batches = {
  bytes: number;
  readDirectBelow: number;
  pieceBytes: number | undefined;
  /** Files with a line longer than DuckDB reads by default, and the `maximum_object_size` each needs (object-size.ts). */
  large?: ReadonlyMap<string, number>;
};

/** The pieces of a load's first batch, cut ahead (`key`: its files). */
type Cut = { key: string; pieces: Pieces };

export interface Early {
  cut: Promise<Cut | undefined> | undefined;
  /**
   * Removals of the scratch files read so far: started as soon as a batch is read, awaited
   * when the load ends, so Node's file system threads delete them while DuckDB goes on rather
   * than before the commit.
   */
  removing: Promise<unknown>[];
  /**
   * The sizes of the first kind's files, read once for the cut and the commit (a night of a
   * million SERP items before compaction is 10,000 files).
   */
  sized: { files: readonly string[]; sizes: Promise<{ f: string; size: number }[]> } | undefined;
}

/**
 * The size of each of `files` (relative to the warehouse); rejects when one cannot be read.
 * Synchronously: a night's 487 one-answer files took 1 to 3 ms of CPU so, and 7 to 23 ms as as
 * many asynchronous stats (each a round trip to Node's file system threads).
 */
export async function sizesOf(wh: Warehouse, files: readonly string[]): Promise<{ f: string; size: number }[]> {
  return files.map((f) => ({ f, size: statSync(join(wh.dir, f)).size }));
}

/**
 * How many tables of each kind read its bodies (rather than their heads), as the kind's last load
 * in this process planned it: what cutEarly expects before the plan of this load is known.
 */
const BODY_READERS = new Map<string, number>();

/** Notes how many of a kind's tables read its bodies (commit, once the kind is planned). */
export function noteBodyReaders(kind: string, n: number): void {
  BODY_READERS.delete(kind);
  BODY_READERS.set(kind, n);
  if (BODY_READERS.size > 64) BODY_READERS.delete(BODY_READERS.keys().next().value!);
}

/**
 * Starts cutting the first batch of a kind's files (relative to the warehouse) into pieces, as
 * commit() would when it reads the batch as gzip, while DuckDB looks at the load; and reads every
 * file's size, for the batches and for commit(). The cut is undefined when the batch is not read
 * as gzip, or when cutting fails (commit() then cuts it and meets the error); the sizes reject as
 * a file that cannot be read.
 *
 * Whether it is read as gzip depends on how many of the kind's tables read the bodies, which
 * its plan tells only later: expected to be as the kind's last load in this process planned it,
 * else one (the usual plan: the items read from the bodies, the results from the heads). For a
 * large batch, cut while DuckDB looks at the load rather than after (a million generic items:
 * 300 pieces, 0.1 to 0.3 s of file creation on this machine's disk). When the plan reads the
 * bodies with more tables (a reindexed warehouse, no heads), the batch is inflated instead and
 * the pieces are removed unused.
 *
 * When one table is expected to read the bodies, the batch is read as gzip whatever its size
 * (readsDirect), so its files are cut as they are read, up to a load batch (cutInPieces), and their
 * sizes taken as they are opened, not asked of each file first: a night of 10,000 one-answer files
 * spent 25 to 45 ms on those stats, on the main thread before DuckDB was given the looks. Else
 * every file is sized first (sizesOf) and the cut waits for its plan's sizes.
 */
export function startEarly(wh: Warehouse, kind: string, files: readonly string[], batches: Batches): Pick<Early, 'cut' | 'sized'> {
  if (batches.readDirectBelow <= 0 || (BODY_READERS.get(kind) ?? 1) > 1) {
    const sizes = sizesOf(wh, files);
    return { sized: { files, sizes }, cut: cutSized(wh, kind, sizes, batches) };
  }
  let sized!: { resolve: (s: { f: string; size: number }[]) => void; reject: (err: unknown) => void };
  const sizes = new Promise<{ f: string; size: number }[]>((resolve, reject) => (sized = { resolve, reject }));
  // Rejected for commit() to meet; unhandled only when the load fails before it asks.
  sizes.catch(() => {});
  const cut = (async (): Promise<Cut | undefined> => {
    // After this turn: DuckDB is given the looks first (planAndLoad), then the files are read here.
    await null;
    let first: { f: string; size: number }[];
    let pieces: Pieces;
    try {
      const read = cutInPieces(
        files.map((f) => join(wh.dir, f)),
        wh.dir,
        { target: batches.pieceBytes, room: batches.bytes, upTo: batches.bytes },
      );
      first = read.sizes.map((size, i) => ({ f: files[i]!, size }));
      pieces = read.pieces;
    } catch {
      // A file that cannot be read, or a piece that cannot be written: every file sized as it
      // can be (rejected for a file that cannot be), and commit() cuts the batch and meets the error.
      void sizesOf(wh, files).then(sized.resolve, sized.reject);
      return undefined;
    }
    // The files of the batches after the first (a night's files are one batch) are sized apart.
    void sizesOf(wh, files.slice(first.length)).then((rest) => sized.resolve([...first, ...rest]), sized.reject);
    return { key: batchKey(first), pieces };
  })();
  return { sized: { files, sizes }, cut };
}

/** The early cut of the first batch once every file is sized (`sizes`); see startEarly. */
async function cutSized(wh: Warehouse, kind: string, sizes: Promise<{ f: string; size: number }[]>, batches: Batches): Promise<Cut | undefined> {
  try {
    const sized = await sizes;
    const first = byteBatches(sized, batches.bytes)[0];
    if (!first || !readsDirect(first, batches.readDirectBelow, BODY_READERS.get(kind) ?? 1)) return undefined;
    return await cutBatch(wh, first, batches);
  } catch {
    return undefined;
  }
}

/** A batch's pieces (intoPieces), keyed by the batch. */
async function cutBatch(wh: Warehouse, batch: readonly { f: string; size: number }[], batches: Batches): Promise<Cut> {
  const pieces = await intoPieces(
    batch.map(({ f, size }) => ({ file: join(wh.dir, f), size })),
    wh.dir,
    batches.pieceBytes,
  );
  return { key: batchKey(batch), pieces };
}

function batchKey(batch: readonly { f: string; size: number }[]): string {
  return batch.map(({ f, size }) => `${f}\u0000${size}`).join('\n');
}

/** The pieces cut ahead when they are those of `batch` (taken once); any other cut is removed. */
export async function takeEarly(early: Early, batch: readonly { f: string; size: number }[]): Promise<Pieces | undefined> {
  if (!early.cut) return undefined;
  const c = await early.cut;
  early.cut = undefined;
  if (!c) return undefined;
  if (c.key === batchKey(batch)) return c.pieces;
  await Promise.all(c.pieces.scratch.map((f) => removeInflated(f)));
  return undefined;
}

/** Gzip bytes of landed files inflated and read together by a load (about 1.5 GB of plain SERP NDJSON). */
export const LOAD_BATCH_BYTES = 128 << 20;

/**
 * A batch of less gzip than this (a night's load of 250 to 500 SERP tasks is about 4 MB) is
 * read by DuckDB straight from the landed files, which each table then inflates again, in
 * pieces of about 1 MiB of bodies (2 on the disk; intoPieces). That takes no more time than inflating once
 * into a scratch file, and less peak memory (docs/performance.md): DuckDB parses a
 * file's read buffer of bodies at once, and Node's inflate leaves the plain text behind as
 * buffers for the garbage collector. Larger batches are inflated once, on several threads,
 * unless they hold small files only (SMALL_FILE_BYTES).
 */
export const READ_DIRECT_BELOW = 8 << 20;

/**
 * A landed file of less gzip than this is small: one answer, or a few landed together. A batch of
 * small files only (a big account's night before compaction: 10,000 one-answer files of about 8
 * KB for a million SERP items) is read directly however large: inflating such files, with a
 * stream and a pipeline per file, costs more time than it saves, for no less memory
 * (docs/performance.md).
 */
const SMALL_FILE_BYTES = 1 << 20;

/**
 * Whether a batch is read as gzip straight from its landed files (in pieces, intoPieces) rather
 * than inflated into one plain scratch file: when it holds less than `readDirectBelow` bytes, or
 * only small files, or when at most one table of its kind reads the bodies (`bodyReaders`; the
 * others read the heads, raw_heads). Never when `readDirectBelow` is 0 (the reload from plain
 * text after a short read, ShortRead).
 *
 * Inflating once pays only when several tables read the same bodies (a reindexed warehouse, with
 * no heads): each read of gzip inflates it again. One reader inflates the pieces once either way,
 * on DuckDB's threads, one piece each; inflating first added Node's inflate and the write and
 * read of the plain text (about 300 MB for a million generic items): 0.3 to 0.4 s of CPU of a
 * 2.0 to 2.5 s load (docs/warehouse.md, "Load path, and why").
 */
export function readsDirect(batch: readonly { size: number }[], readDirectBelow: number, bodyReaders = 2): boolean {
  if (readDirectBelow <= 0) return false;
  if (bodyReaders <= 1) return true;
  return batch.reduce((s, { size }) => s + size, 0) < readDirectBelow || batch.every(({ size }) => size < SMALL_FILE_BYTES);
}
