import { createReadStream, readFileSync } from 'node:fs';
import { mkdir, open, readdir, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { clearMemoryScratch, leftByGone, memoryScratch, scratchDir, scratchFile, writePieces } from './scratch.js';

export { scratchDir, scratchFile } from './scratch.js';

/** Removes scratch files left by a load whose process is gone (killed mid-load); a live process removes its own. */
export async function clearScratch(warehouseDir: string): Promise<void> {
  const dir = scratchDir(warehouseDir);
  for (const n of await readdir(dir).catch(() => [] as string[])) if (leftByGone(n)) await rm(join(dir, n), { force: true });
  clearMemoryScratch(warehouseDir);
}

/** A byte range of a landed file made of whole gzip members. */
interface Piece {
  file: string;
  start: number;
  end: number;
}

/** One gzip member: its bytes and the size of what it inflates to (its trailer's ISIZE). */
interface Member extends Piece {
  isize: number;
}

/** Below this many compressed bytes one thread inflates everything. */
const PARALLEL = 8 << 20;
const CHUNK = 1 << 18;

/**
 * Inflates landed gzip NDJSON files (multi-member segments included) into one plain NDJSON
 * file `out`, so a load decompresses each file once however many tables read it, and
 * DuckDB splits the plain file across its threads (a gzip stream is read by one thread).
 * Large inputs are inflated by several threads, each writing its share of gzip members at
 * its place in `out` (each member's trailer tells its inflated size). A file that does not
 * inflate (a torn gzip) rejects; the caller removes `out`.
 */
export async function inflate(files: readonly string[], out: string): Promise<void> {
  await mkdir(join(out, '..'), { recursive: true, mode: 0o700 }); // scratch bodies: owner-only, as raw/
  const sized = await Promise.all(files.map(async (file) => ({ file, start: 0, end: (await stat(file)).size })));
  const threads = Math.max(1, Math.min(4, availableParallelism()));
  const total = sized.reduce((s, f) => s + f.end, 0);
  if (threads > 1 && total >= PARALLEL) {
    const all: Member[] = [];
    let whole = true;
    for (const f of sized) {
      const ms = await members(f.file, f.end);
      if (!ms) whole = false;
      else all.push(...ms);
    }
    if (whole && (await inflateShares(shares(all, threads), out).catch(() => false))) return;
    // A file that is not whole members as the landing writes them, or bytes that only looked
    // like a member's start: one thread, whole files. A torn file fails here too, and rejects.
  }
  const fh = await open(out, 'w', 0o600);
  try {
    let at = 0;
    for (const f of sized) {
      const r = await inflatePieces(fh, [f], at);
      at += r.bytes;
      // A landed line ends in a newline; a file that does not would join the next one's first.
      if (!r.newline) at += await writeAt(fh, Buffer.from('\n'), at);
    }
  } finally {
    await fh.close();
  }
}

/** Splits the members `n` ways in order, balancing compressed bytes; each share knows where its output starts. */
function shares(all: Member[], n: number): { pieces: Piece[]; offset: number; size: number }[] {
  const total = all.reduce((s, m) => s + m.end - m.start, 0);
  const out: { pieces: Piece[]; offset: number; size: number }[] = [];
  let acc = 0;
  let offset = 0;
  for (const m of all) {
    let cur = out.at(-1);
    if (!cur || (cur.pieces.length > 0 && acc >= (total * out.length) / n && out.length < n)) {
      offset += cur?.size ?? 0;
      out.push((cur = { pieces: [], offset, size: 0 }));
    }
    const last = cur.pieces.at(-1);
    if (last && last.file === m.file && last.end === m.start) last.end = m.end;
    else cur.pieces.push({ file: m.file, start: m.start, end: m.end });
    cur.size += m.isize;
    acc += m.end - m.start;
  }
  return out;
}

/** Inflates every share at its offset; false when a share's output is not the size its members announced. */
async function inflateShares(plan: { pieces: Piece[]; offset: number; size: number }[], out: string): Promise<boolean> {
  const fh = await open(out, 'w', 0o600);
  try {
    // Every share settles before this returns, so no write is still under way.
    const settled = await Promise.allSettled(plan.map((s) => inflatePieces(fh, s.pieces, s.offset)));
    return settled.every((r, i) => r.status === 'fulfilled' && r.value.bytes === plan[i]!.size && r.value.newline);
  } finally {
    await fh.close();
  }
}

/** Inflates the pieces in order from `offset`; `newline` tells whether each piece ended in one. */
async function inflatePieces(fh: FileHandle, pieces: Piece[], offset: number): Promise<{ bytes: number; newline: boolean }> {
  let at = offset;
  let newline = true;
  for (const p of pieces) {
    if (p.end <= p.start) continue;
    let last = 0x0a;
    await pipeline(createReadStream(p.file, { start: p.start, end: p.end - 1, highWaterMark: CHUNK }), createGunzip({ chunkSize: CHUNK }), async (source: AsyncIterable<Buffer>) => {
      for await (const b of source) {
        if (b.length === 0) continue;
        at += await writeAt(fh, b, at);
        last = b[b.length - 1]!;
      }
    });
    newline &&= last === 0x0a;
  }
  return { bytes: at - offset, newline };
}

/**
 * The gzip members of a file as Node's zlib writes them (1f 8b 08 00, mtime, XFL 0/2/4),
 * found by their headers, with the inflated size from the 4 bytes before the next header
 * (the end of the file for the last). Null when the file does not start with one. A
 * header-like run of bytes inside a member (landed lines are JSON with control bytes
 * escaped, so hardly ever) gives sizes that do not add up, and `inflate` falls back.
 */
async function members(file: string, size: number): Promise<Member[] | null> {
  const starts: number[] = [];
  const isizes: number[] = [];
  let carry: Buffer = Buffer.alloc(0);
  let base = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    const b = carry.length > 0 ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
    const from = Math.max(0, carry.length - 9);
    for (let i = b.indexOf(0x1f, from); i >= 0 && i + 10 <= b.length; i = b.indexOf(0x1f, i + 1)) {
      if (!memberHeaderAt(b, i)) continue;
      const abs = base + i;
      if (abs === starts.at(-1)) continue;
      if (abs > 0) {
        if (i < 4) return null;
        isizes.push(b.readUInt32LE(i - 4));
      }
      starts.push(abs);
    }
    carry = b.subarray(Math.max(0, b.length - 16));
    base += b.length - carry.length;
  }
  if (starts[0] !== 0 || carry.length < 4) return null;
  isizes.push(carry.readUInt32LE(carry.length - 4));
  return starts.map((start, i) => ({ file, start, end: starts[i + 1] ?? size, isize: isizes[i]! }));
}

/**
 * How many lines a landed file holds, as far as its bytes tell without inflating it: one per
 * gzip member (the landing gzips each answer alone, and compaction joins members whole). Null
 * when its members cannot be told apart. Callbacks landed together share one member: their
 * files need {@link linesOf}.
 */
export async function membersOf(file: string): Promise<number | null> {
  const size = (await stat(file)).size;
  // Small files whole, at once (see intoPieces); a segment streamed, so the event loop is not held.
  if (size <= 8 << 20) return membersIn(readFileSync(file))?.length ?? null;
  const ms = await members(file, size);
  if (!ms || ms.some((m) => m.end - m.start < 20 || m.isize > 1032 * (m.end - m.start))) return null;
  return ms.length;
}

/** The lines of a gzip NDJSON file, inflated in Node: its newlines (every landed line ends in one). */
export async function linesOf(file: string): Promise<number> {
  let n = 0;
  await pipeline(createReadStream(file), createGunzip(), async (src: AsyncIterable<Buffer>) => {
    for await (const b of src) for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) n++;
  });
  return n;
}

/** The bytes of the longest line of a landed file (gzip, or plain text when it does not end in `.gz`). */
export async function longestLine(file: string): Promise<number> {
  let longest = 0;
  let run = 0;
  const count = async (src: AsyncIterable<Buffer>) => {
    for await (const b of src) {
      let from = 0;
      for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) {
        longest = Math.max(longest, run + i - from);
        run = 0;
        from = i + 1;
      }
      run += b.length - from;
    }
  };
  if (file.endsWith('.gz')) await pipeline(createReadStream(file), createGunzip(), count);
  else await pipeline(createReadStream(file), count);
  return Math.max(longest, run);
}

/** The first bytes of a gzip member header as Node's zlib writes it (magic, deflate, no flags). */
const MEMBER_MAGIC = Buffer.from([0x1f, 0x8b, 0x08, 0x00]);

/** Whether a gzip member header as Node's zlib writes it starts at `b[i]` (10 bytes must follow). */
export function memberHeaderAt(b: Buffer, i: number): boolean {
  return b[i] === 0x1f && b[i + 1] === 0x8b && b[i + 2] === 0x08 && b[i + 3] === 0x00 && (b[i + 8] === 0 || b[i + 8] === 2 || b[i + 8] === 4);
}

/**
 * `members` of a file held whole in memory, or null when they cannot be trusted: a member must
 * be longer than its header and trailer, and inflate to no more than deflate's 1,032 to 1 (a
 * header-like run of bytes inside a member gives sizes read from the middle of its data).
 */
function membersIn(b: Buffer): { start: number; end: number; isize: number }[] | null {
  const starts: number[] = [];
  // Found by the header's first four bytes, searched natively: a search for 0x1f alone stops at
  // every 256th byte of deflate data and checks each in JavaScript.
  for (let i = b.indexOf(MEMBER_MAGIC); i >= 0 && i + 10 <= b.length; i = b.indexOf(MEMBER_MAGIC, i + 1)) if (memberHeaderAt(b, i)) starts.push(i);
  if (starts[0] !== 0) return null;
  const out: { start: number; end: number; isize: number }[] = [];
  for (const [k, start] of starts.entries()) {
    const end = starts[k + 1] ?? b.length;
    if (end - start < 20) return null;
    const isize = b.readUInt32LE(end - 4);
    if (isize > 1032 * (end - start)) return null;
    out.push({ start, end, isize });
  }
  return out;
}

async function writeAt(fh: FileHandle, b: Buffer, position: number): Promise<number> {
  for (let off = 0; off < b.length; ) off += (await fh.write(b, off, b.length - off, position + off)).bytesWritten;
  return b.length;
}

/**
 * Inflated bytes of a piece of `intoPieces`: about 20 SERP bodies of depth 100. Each piece is a
 * file created for the load, and creating files is not free everywhere: on this machine's disk
 * (ext4 without a journal) a file created after many deletions costs 0.3 to 1.3 ms of system CPU
 * (measured when the pieces went to the disk; now they go to memory where it can: scratch.ts).
 * Larger pieces cost DuckDB more: 10,000 one-answer files read (read_json alone) in pieces of
 * about 1, 2, 4 and 8 MiB took 2.27 to 2.31, 2.33 to 2.36, 2.36 to 2.54 and 2.61 to 2.81 s of CPU.
 * Against pieces of 1 MiB, in three runs of a million rows alternating: a segment 0.75 to 0.78 of
 * read_json against 0.66 to 0.69, a night's files 0.68 to 0.79 against 0.68 to 0.80, generic
 * items 0.72 to 0.82 against 0.68 to 0.76 (docs/warehouse.md, figures of 2026-11-28, eighth).
 */
const PIECE_BYTES = 2 << 20;

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
 * read whole. The pieces are written in memory where the system has room for them, else in the
 * warehouse's scratch folder (scratch.ts, memoryScratch). Returns the files to read and, apart,
 * the scratch files among them, for the caller to remove; on an error, removes its own.
 */
export async function intoPieces(
  files: readonly { file: string; size: number }[],
  warehouseDir: string,
  target: number = PIECE_BYTES,
  /** The files' bytes when the caller has read them already (startEarly), in the same order. */
  given?: readonly Buffer[],
): Promise<{ read: string[]; scratch: string[] }> {
  // What to read, in order: a file in place, or a scratch file of these byte ranges.
  const plan: ({ file: string } | { parts: Buffer[] })[] = [];
  let joined: { file: string; bytes: Buffer }[] = [];
  let joinedBytes = 0;
  const endJoin = () => {
    if (joined.length === 1) plan.push({ file: joined[0]!.file });
    else if (joined.length > 1) plan.push({ parts: joined.map((j) => j.bytes) });
    joined = [];
    joinedBytes = 0;
  };
  // Whole: this is for batches of a few MB of gzip (READ_DIRECT_BELOW in load/batches.ts), of
  // small files only up to a load batch (readsDirect: 80 MB for a night of a million SERP items),
  // or of a kind whose bodies one table reads, up to a load batch (LOAD_BATCH_BYTES, 128 MiB: a
  // replay's compacted segments; held in memory while its pieces are written).
  // Read synchronously: a night's files are small, and each asynchronous read is several round
  // trips to Node's file system threads. The event loop waits while they are read; for the
  // largest batches (10,000 files) 0.15 to 0.25 s, reads and writes together. A worker thread
  // reading half of them took longer here (about 140 ms against 115 for 9,733 files, and 60% more
  // CPU): the kernel's work per file did not go faster on two threads.
  const contents = given ?? files.map(({ file }) => readFileSync(file));
  for (const [i, { file }] of files.entries()) {
    const bytes = contents[i]!;
    const ms = membersIn(bytes);
    if (!ms) {
      endJoin();
      plan.push({ file });
      continue;
    }
    const inflated = ms.reduce((s, m) => s + m.isize, 0);
    if (inflated <= target) {
      if (joined.length > 0 && joinedBytes + inflated > target) endJoin();
      joined.push({ file, bytes });
      joinedBytes += inflated;
    } else {
      endJoin();
      let cut: Buffer[] = [];
      let cutBytes = 0;
      for (const m of ms) {
        if (cut.length > 0 && cutBytes + m.isize > target) {
          plan.push({ parts: cut });
          cut = [];
          cutBytes = 0;
        }
        cut.push(bytes.subarray(m.start, m.end));
        cutBytes += m.isize;
      }
      plan.push({ parts: cut });
    }
  }
  endJoin();
  const bytes = plan.reduce((s, p) => s + ('parts' in p ? p.parts.reduce((t, b) => t + b.length, 0) : 0), 0);
  const memory = bytes > 0 ? memoryScratch(warehouseDir, bytes) : undefined;
  try {
    return writePieces(plan, memory, warehouseDir);
  } catch (err) {
    // Memory that ran out meanwhile (another load, another process): the disk instead.
    if (!memory) throw err;
    return writePieces(plan, undefined, warehouseDir);
  }
}

/** Removes the scratch file `out` of `inflate`. */
export async function removeInflated(out: string): Promise<void> {
  // One call to the file system (rm looks at the path first): a load removes hundreds of pieces.
  await unlink(out).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}
