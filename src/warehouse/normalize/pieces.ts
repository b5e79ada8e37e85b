import { closeSync, fstatSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { membersIn } from './inflate.js';
import { memoryScratch, scratchDir, scratchFile } from './scratch.js';

/**
 * Inflated bytes of a piece of `intoPieces` on the disk: about 20 SERP bodies of depth 100. Each
 * piece is a file created for the load, and creating files is not free everywhere: on this
 * machine's disk (ext4 without a journal) a file created after many deletions costs 0.3 to 1.3 ms
 * of system CPU. Against pieces of 1 MiB there, in three runs of a million rows alternating: a
 * segment 0.75 to 0.78 of read_json against 0.66 to 0.69, a night's files 0.68 to 0.79 against
 * 0.68 to 0.80, generic items 0.72 to 0.82 against 0.68 to 0.76 (docs/warehouse.md, figures of
 * 2026-11-28, eighth).
 */
const DISK_PIECE_BYTES = 2 << 20;

/**
 * Inflated bytes of a piece in memory (scratch.ts), where a file costs little to create. With
 * row groups written as they fill (warehouse.ts), a million generic items in one segment loaded in
 * 0.86 to 0.88 s in pieces of 1 MiB, 0.88 to 0.90 in 512 or 768 KiB, 0.90 to 0.91 in 2 MiB and
 * 0.95 to 0.97 in 4 MiB (loads alternating); a million SERP items in 10,000 files or in one
 * segment alike in 1 or 2 MiB (3.11 to 3.14 s against 3.09 to 3.20; 2.80 to 2.95 against 2.79 to
 * 3.04).
 */
const PIECE_BYTES = 1 << 20;

/** The files a load reads, in order, and the scratch files among them (for the caller to remove). */
export interface Pieces {
  read: string[];
  scratch: string[];
}

/**
 * The files of a small load batch as DuckDB should read them, gzip as landed, in pieces of about
 * `target` inflated bytes:
 * - a file of more than `target` (a compacted segment: hundreds of bodies) is cut at its gzip
 *   members into scratch files, byte for byte. DuckDB keeps a 32 MB read buffer per file and
 *   parses every body in it at once, so a segment read whole costs more memory than in pieces
 *   (docs/warehouse.md, "Load path, and why");
 * - small files in a row (a night's one body per response) are joined into scratch files, end to
 *   end (every landed line ends in a newline: landedLine), since opening each file apart costs
 *   DuckDB more. Not with a gzip member of one newline after each file: DuckDB's gzip reader
 *   stops early, silently, on some such groupings (test/unit/warehouse/inflate.test.ts), and
 *   the tasks would be marked collected without their rows. A small file alone in its piece is
 *   read in place.
 *
 * A file whose members cannot be found, or whose sizes do not look like a deflate stream's, is
 * read whole. The pieces are written in memory where the system has room for the files' bytes,
 * else in the warehouse's scratch folder (scratch.ts, memoryScratch). Returns the files to read
 * and, apart, the scratch files among them, for the caller to remove; on an error, removes its own.
 */
export async function intoPieces(files: readonly { file: string; size: number }[], warehouseDir: string, target?: number): Promise<Pieces> {
  const room = files.reduce((s, f) => s + f.size, 0);
  return cutInPieces(
    files.map((f) => f.file),
    warehouseDir,
    { target, room },
  ).pieces;
}

/** The reused buffer's first size: a piece of small files is at most about `target` of gzip. */
const BUFFER_BYTES = 4 << 20;

/**
 * `files` cut as intoPieces says, read one at a time in order into one reused buffer and each
 * piece written as soon as it is whole; with `upTo`, up to the file that would take the bytes read
 * past it (a load batch: byteBatches), which is not read. `sizes`: the bytes of each file taken.
 * `room`: the bytes the pieces may take, asked of the memory file system first; `target`: the
 * inflated bytes of a piece, by default PIECE_BYTES in memory and DISK_PIECE_BYTES on the disk.
 *
 * Read and written synchronously: a night's files are small, and each asynchronous read is
 * several round trips to Node's file system threads; DuckDB runs the load's looks and pick
 * meanwhile (load-landed.ts), and needs nothing of this thread until they end. Into one buffer
 * rather than a buffer per file: 9,733 one-answer files (113 MB) read whole, then written, took
 * 150 to 250 ms and 21,000 page faults; through one buffer, 101 to 114 ms and 2,000 (the load's
 * fresh memory is what the machine's host may have to give back first). A worker thread reading
 * half of the files took longer (about 140 ms against 115, and 60% more CPU).
 */
export function cutInPieces(
  files: readonly string[],
  warehouseDir: string,
  o: { target?: number | undefined; room: number; upTo?: number },
): { pieces: Pieces; sizes: number[] } {
  const out = pieceWriter(warehouseDir, o.room);
  const target = o.target ?? (out.inMemory ? PIECE_BYTES : DISK_PIECE_BYTES);
  const read: string[] = [];
  const sizes: number[] = [];
  let total = 0;
  let buf: Buffer = Buffer.allocUnsafeSlow(BUFFER_BYTES);
  // The run of small files being joined: their names, their inflated bytes, and their gzip end
  // to end at the start of `buf` (`used` bytes).
  let joined: string[] = [];
  let inflatedBytes = 0;
  let used = 0;
  const endJoin = () => {
    if (joined.length === 1) read.push(joined[0]!);
    else if (joined.length > 1) read.push(out.write(buf.subarray(0, used)));
    joined = [];
    inflatedBytes = 0;
    used = 0;
  };
  try {
    for (const file of files) {
      const fd = openSync(file, 'r');
      let size: number;
      try {
        size = fstatSync(fd).size;
        if (sizes.length > 0 && total + size > (o.upTo ?? Infinity)) break;
        if (used + size > buf.length) buf = grown(buf, used, used + size);
        size = readWhole(fd, buf, used, size);
      } finally {
        closeSync(fd);
      }
      sizes.push(size);
      total += size;
      // The file's bytes, after the run's (the buffer is not replaced before the next file).
      const at = used;
      const bytes = buf.subarray(at, at + size);
      const ms = membersIn(bytes);
      if (!ms) {
        endJoin();
        read.push(file);
        continue;
      }
      const inflated = ms.reduce((s, m) => s + m.isize, 0);
      if (inflated <= target) {
        if (joined.length > 0 && inflatedBytes + inflated > target) {
          endJoin();
          buf.copyWithin(0, at, at + size);
        }
        joined.push(file);
        inflatedBytes += inflated;
        used += size;
        continue;
      }
      endJoin();
      read.push(...cutAtMembers(bytes, ms, target, out.write));
    }
    endJoin();
  } catch (err) {
    // Every file it would leave is removed before the failure is thrown.
    out.removeAll();
    throw err;
  }
  return { pieces: { read, scratch: out.written }, sizes };
}

/**
 * A file of more than `target` of bodies cut at its gzip members into pieces of about `target`,
 * each written by `write`; the pieces, in order. Members lie end to end: a piece is one range of
 * the file's bytes, written at once rather than gathered member by member (a 29 MB segment cut
 * into 152 pieces: 37.8 to 42.8 ms against 40.5 to 45.7).
 */
function cutAtMembers(bytes: Buffer, ms: readonly { start: number; end: number; isize: number }[], target: number, write: (bytes: Buffer) => string): string[] {
  const pieces: string[] = [];
  let start = 0;
  let end = 0;
  let inflated = 0;
  for (const m of ms) {
    if (end > start && inflated + m.isize > target) {
      pieces.push(write(bytes.subarray(start, end)));
      start = m.start;
      inflated = 0;
    }
    end = m.end;
    inflated += m.isize;
  }
  pieces.push(write(bytes.subarray(start, end)));
  return pieces;
}

/** Up to `size` bytes of the open file `fd` from its start into `buf` at `at`; how many it held. */
function readWhole(fd: number, buf: Buffer, at: number, size: number): number {
  let n = 0;
  while (n < size) {
    const r = readSync(fd, buf, at + n, size - n, n);
    if (r === 0) break;
    n += r;
  }
  return n;
}

/** A larger buffer holding the first `used` bytes of `buf`. */
function grown(buf: Buffer, used: number, need: number): Buffer {
  const b = Buffer.allocUnsafeSlow(Math.max(need, 2 * buf.length));
  buf.copy(b, 0, 0, used);
  return b;
}

/**
 * Writes pieces, each a new owner-only file: in memory (memoryScratch, asked at once for `room`
 * bytes; `inMemory` tells whether it gave room), else in the warehouse's scratch folder. A piece
 * memory refuses (it ran out meanwhile: another load, another process) goes to the disk, and so
 * do the pieces after it. `name`: the memory's names, when given (for tests).
 */
export function pieceWriter(
  warehouseDir: string,
  room: number,
  name?: () => string,
): { write: (bytes: Buffer) => string; written: string[]; removeAll: () => void; inMemory: boolean } {
  const written: string[] = [];
  let memory = name ?? memoryScratch(warehouseDir, room);
  let disk = false;
  const onDisk = () => {
    if (!disk) mkdirSync(scratchDir(warehouseDir), { recursive: true, mode: 0o700 });
    disk = true;
    return `${scratchFile(warehouseDir)}.gz`;
  };
  const write = (bytes: Buffer): string => {
    for (;;) {
      const inMemory = memory;
      const out = inMemory ? inMemory() : onDisk();
      try {
        writeWholeSync(bytes, out);
        written.push(out);
        return out;
      } catch (err) {
        rmSync(out, { force: true });
        if (!inMemory) throw err;
        memory = undefined;
      }
    }
  };
  const removeAll = () => {
    for (const f of written) rmSync(f, { force: true });
  };
  return { write, written, removeAll, inMemory: memory !== undefined };
}

/** Writes `bytes` into a new owner-only file `out`. */
function writeWholeSync(bytes: Buffer, out: string): void {
  const fd = openSync(out, 'w', 0o600);
  try {
    // The rest of a short write (the system may take fewer bytes at once).
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, done);
  } finally {
    closeSync(fd);
  }
}
