import { createReadStream, readFileSync } from 'node:fs';
import { mkdir, open, readdir, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { clearMemoryScratch, leftByGone, scratchDir } from './scratch.js';

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
  // Small files whole, at once (see intoPieces, pieces.ts); a segment streamed, so the event loop is not held.
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
export function membersIn(b: Buffer): { start: number; end: number; isize: number }[] | null {
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

/** Removes the scratch file `out` of `inflate`. */
export async function removeInflated(out: string): Promise<void> {
  // One call to the file system (rm looks at the path first): a load removes hundreds of pieces.
  await unlink(out).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}
