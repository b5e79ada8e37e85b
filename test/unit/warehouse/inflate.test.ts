import { existsSync, statfsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { clearScratch, inflate, linesOf, membersOf, removeInflated, scratchDir, scratchFile } from '../../../src/warehouse/normalize/inflate.js';
import { cutInPieces, intoPieces, pieceWriter } from '../../../src/warehouse/normalize/pieces.js';
import { memoryPiecesOf, memoryScratch } from '../../../src/warehouse/normalize/scratch.js';

/** Pseudo-random text that gzip cannot shrink much, so a segment passes the split size quickly. */
function lines(n: number, seed: number, words = 400): string[] {
  let x = seed;
  const word = () => ((x = (x * 1103515245 + 12345) % 2 ** 31), x.toString(36));
  return Array.from({ length: n }, (_, i) => JSON.stringify({ i, seed, text: Array.from({ length: words }, word).join(' ') }));
}

/** A segment as compaction writes it: one gzip member per landed line, end to end. */
function segment(ls: string[]): Buffer {
  return Buffer.concat(ls.map((l) => gzipSync(`${l}\n`)));
}

describe('inflating landed gzip files for a load', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pipeline-inflate-'));
  });
  afterEach(async () => {
    delete process.env.PIPELINE_LOAD_SCRATCH;
    // The pieces a test cut in memory (/dev/shm) and did not remove: they are not under `dir`.
    for (const f of memoryPiecesOf(dir)) await rm(f, { force: true });
    await rm(dir, { recursive: true, force: true });
  });

  it('gives back every line of every file, in order, with a large segment shared between threads', async () => {
    const big = lines(6_000, 1);
    const small = lines(3, 2);
    await writeFile(join(dir, 'big.ndjson.gz'), segment(big));
    await writeFile(join(dir, 'small.ndjson.gz'), segment(small));
    // A file whose last line has no newline still ends its lines.
    await writeFile(join(dir, 'bare.ndjson.gz'), gzipSync('{"bare":true}'));
    expect((await readFile(join(dir, 'big.ndjson.gz'))).length).toBeGreaterThan(8 << 20);
    // Counted as a reindex counts them: members streamed (a large file), lines inflated in Node.
    expect(await membersOf(join(dir, 'big.ndjson.gz'))).toBe(6_000);
    expect(await linesOf(join(dir, 'big.ndjson.gz'))).toBe(6_000);
    const out = join(dir, 'tmp', 'load-a.ndjson');
    await inflate([join(dir, 'big.ndjson.gz'), join(dir, 'small.ndjson.gz'), join(dir, 'bare.ndjson.gz')], out);
    expect(await readFile(out, 'utf8')).toBe([...big, ...small, '{"bare":true}'].join('\n') + '\n');
    // The other order: the file without a final newline in the middle still ends its line.
    await inflate([join(dir, 'bare.ndjson.gz'), join(dir, 'big.ndjson.gz')], out);
    expect(await readFile(out, 'utf8')).toBe(['{"bare":true}', ...big].join('\n') + '\n');
    await removeInflated(out);
    expect(await readdir(join(dir, 'tmp'))).toEqual([]);
  });

  it('falls back to one thread when bytes inside a member only look like a gzip header', async () => {
    // A stored (level 0) member carries its bytes as they are: one 9 MB line full of gzip
    // headers puts them inside the member, where every cut is wrong.
    const header = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03]);
    const line = Buffer.concat([...Array.from({ length: 80_000 }, () => Buffer.concat([header, Buffer.alloc(100, 'x')])), Buffer.from('\n')]);
    await writeFile(join(dir, 'odd.ndjson.gz'), gzipSync(line, { level: 0 }));
    const out = join(dir, 'tmp', 'load-b.ndjson');
    await inflate([join(dir, 'odd.ndjson.gz')], out);
    expect((await readFile(out)).equals(line)).toBe(true);
  });

  it('cuts a large segment at its members into pieces of about the target, and reads odd files in place', async () => {
    const seg = lines(40, 4, 200);
    const segBytes = segment(seg);
    await writeFile(join(dir, 'seg.ndjson.gz'), segBytes);
    const one = gzipSync(`${lines(1, 5)[0]}\n`);
    await writeFile(join(dir, 'one.ndjson.gz'), one);
    const header = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03]);
    const odd = Buffer.concat([gzipSync('{"a":1}\n'), gzipSync(Buffer.concat([header, Buffer.alloc(100, 'x'), Buffer.from('\n')]), { level: 0 })]);
    await writeFile(join(dir, 'odd.ndjson.gz'), odd);
    const target = 3 * (Buffer.byteLength(seg[0]!) + 1);
    const files = [
      { file: join(dir, 'seg.ndjson.gz'), size: segBytes.length },
      { file: join(dir, 'one.ndjson.gz'), size: one.length },
      { file: join(dir, 'odd.ndjson.gz'), size: odd.length },
    ];
    // In the warehouse's folder (the memory file system's use: 'where a load's pieces go' below).
    process.env.PIPELINE_LOAD_SCRATCH = 'disk';
    const out = await intoPieces(files, dir, target);
    // The segment becomes pieces of three or fewer lines each, in order; the small file and the
    // file with a header-like run inside a member (sizes that cannot be a member's) are read in place.
    expect(out.read.slice(-2)).toEqual([join(dir, 'one.ndjson.gz'), join(dir, 'odd.ndjson.gz')]);
    expect(out.scratch).toEqual(out.read.slice(0, -2));
    expect(out.scratch.length).toBeGreaterThanOrEqual(14);
    const texts = await Promise.all(out.scratch.map(async (f) => gunzipSync(await readFile(f)).toString('utf8')));
    expect(texts.every((t) => Buffer.byteLength(t) <= target)).toBe(true);
    expect(texts.join('')).toBe(seg.map((l) => `${l}\n`).join(''));
    expect(out.scratch.every((f) => f.startsWith(scratchDir(dir)))).toBe(true);
    // With a target above the segment's size, nothing is cut: the segment and the small file
    // are joined into one piece (end to end), the odd file is read in place.
    const whole = await intoPieces(files, dir, 1 << 30);
    expect(whole.read).toEqual([whole.scratch[0], join(dir, 'odd.ndjson.gz')]);
    expect(whole.scratch).toHaveLength(1);
    expect(gunzipSync(await readFile(whole.scratch[0]!)).toString('utf8')).toBe(`${seg.map((l) => `${l}\n`).join('')}${lines(1, 5)[0]}\n`);
  });

  it('joins small files in a row into pieces of about the target, end to end', async () => {
    const ls = lines(10, 6, 50);
    const files = await Promise.all(
      ls.map(async (l, i) => {
        const file = join(dir, `r${i}.ndjson.gz`);
        const bytes = gzipSync(`${l}\n`); // as the landing writes each answer
        await writeFile(file, bytes);
        return { file, size: bytes.length };
      }),
    );
    const target = 3 * (Buffer.byteLength(ls[0]!) + 1);
    const out = await intoPieces(files, dir, target);
    // Three lines a piece; the tenth file, alone in its piece, is read in place.
    expect(out.scratch).toHaveLength(3);
    expect(out.read).toEqual([...out.scratch, files[9]!.file]);
    const texts = await Promise.all(out.read.map(async (f) => gunzipSync(await readFile(f)).toString('utf8')));
    expect(texts.every((t) => Buffer.byteLength(t) <= target)).toBe(true);
    expect(texts.join('')).toBe(ls.map((l) => `${l}\n`).join(''));
    // A small file alone is read in place.
    expect(await intoPieces(files.slice(0, 1), dir, target)).toEqual({ read: [files[0]!.file], scratch: [] });
  });

  it('cuts as it reads, up to a batch: stops before the file that would pass it, and joins runs longer than its first buffer', async () => {
    // Five files of about 1.9 MB of gzip each: a run of them is longer than the 4 MiB buffer.
    const ls = Array.from({ length: 5 }, (_, i) => lines(1, 20 + i, 400_000)[0]!);
    const files = await Promise.all(
      ls.map(async (l, i) => {
        const file = join(dir, `big${i}.ndjson.gz`);
        const bytes = gzipSync(`${l}\n`);
        await writeFile(file, bytes);
        return { file, size: bytes.length };
      }),
    );
    expect(files.every((f) => f.size > 1.5e6)).toBe(true);
    const upTo = files[0]!.size + files[1]!.size + files[2]!.size + files[3]!.size - 1;
    const { pieces, sizes } = cutInPieces(
      files.map((f) => f.file),
      dir,
      { target: 1 << 30, room: upTo, upTo },
    );
    // The fourth file would pass the batch: three are taken, joined into one piece.
    expect(sizes).toEqual(files.slice(0, 3).map((f) => f.size));
    expect(pieces.scratch).toHaveLength(1);
    expect(pieces.read).toEqual(pieces.scratch);
    expect(gunzipSync(await readFile(pieces.scratch[0]!)).toString('utf8')).toBe(ls.slice(0, 3).map((l) => `${l}\n`).join(''));
    // The first file is always taken, however small the batch.
    const one = cutInPieces([files[0]!.file, files[1]!.file], dir, { target: 1 << 30, room: 1, upTo: 1 });
    expect(one.sizes).toEqual([files[0]!.size]);
    expect(one.pieces).toEqual({ read: [files[0]!.file], scratch: [] });
    for (const f of pieces.scratch) await removeInflated(f);
  });

  it('pieces joined from a night of SERP answers read back every line through DuckDB, whatever the grouping of the files', async () => {
    // DuckDB's gzip reader stopped early, silently, in about a third of such layouts when a gzip
    // member of one newline followed each joined file (paid results lost): pieces are files end to end.
    // 24 answers as a sandbox run landed them (engA, engB, engC at depth 10), each gzipped as the landing does.
    const text = gunzipSync(await readFile(new URL('../../fixtures/raw/night-serp-answers.ndjson.gz', import.meta.url)));
    const bodies = text
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => gzipSync(`${l}\n`));
    expect(bodies).toHaveLength(24);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    let x = 7;
    const rnd = (n: number) => ((x = (x * 1103515245 + 12345) % 2 ** 31), Math.floor((x / 2 ** 31) * n)); // the high bits: the low ones of this generator cycle
    const short: string[] = [];
    try {
      for (let layout = 0; layout < 30; layout++) {
        const files: { file: string; size: number }[] = [];
        for (let i = 0; i < bodies.length; ) {
          const n = 1 + rnd(4);
          const bytes = Buffer.concat(bodies.slice(i, i + n));
          const file = join(dir, `l${layout}-${i}.ndjson.gz`);
          await writeFile(file, bytes);
          files.push({ file, size: bytes.length });
          i += n;
        }
        const out = await intoPieces(files, dir, 1 << 20);
        const r = await c.runAndReadAll(
          `SELECT count(*)::INT AS n FROM read_json([${out.read.map((f) => `'${f}'`).join(', ')}], columns = {call_id: 'VARCHAR'}, format = 'newline_delimited', compression = 'gzip')`,
        );
        const n = (r.getRowObjectsJS()[0] as { n: number }).n;
        if (n !== bodies.length) short.push(`layout ${layout}: ${n} of ${bodies.length} lines`);
      }
    } finally {
      c.closeSync();
      db.closeSync();
    }
    expect(short).toEqual([]);
  });

  it('counts the members of a landed file, and its lines in Node, one answer or several to a member', async () => {
    const ls = lines(7, 3);
    const one = join(dir, 'one.ndjson.gz');
    await writeFile(one, Buffer.concat(ls.map((l) => gzipSync(`${l}\n`))));
    expect(await membersOf(one)).toBe(7);
    expect(await linesOf(one)).toBe(7);
    // Callbacks landed together share a member.
    const shared = join(dir, 'shared.ndjson.gz');
    await writeFile(shared, Buffer.concat([gzipSync(ls.slice(0, 4).map((l) => `${l}\n`).join('')), gzipSync(ls.slice(4).map((l) => `${l}\n`).join(''))]));
    expect(await membersOf(shared)).toBe(2);
    expect(await linesOf(shared)).toBe(7);
    // Bytes that are not gzip members.
    const plain = join(dir, 'plain.ndjson.gz');
    await writeFile(plain, `${ls[0]}\n`);
    expect(await membersOf(plain)).toBeNull();
  });

  it('rejects a torn gzip file', async () => {
    const bytes = segment(lines(200, 3));
    await writeFile(join(dir, 'torn.ndjson.gz'), bytes.subarray(0, bytes.length - 20));
    await expect(inflate([join(dir, 'torn.ndjson.gz')], join(dir, 'tmp', 'load-c.ndjson'))).rejects.toThrow();
  });

  it("removes the scratch files of a load whose process is gone, never a live one's", async () => {
    const mine = scratchFile(dir);
    const gone = join(scratchDir(dir), 'load-999999999-0badf00d.ndjson');
    await inflate([], mine);
    await writeFile(gone, '{}\n');
    await clearScratch(dir);
    expect(await readdir(scratchDir(dir))).toEqual([mine.slice(scratchDir(dir).length + 1)]);
  });
});

describe("where a load's pieces go", () => {
  let dir: string;
  let memory: string;
  let files: { file: string; size: number }[];
  let ls: string[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pipeline-pieces-'));
    // A folder standing in for /dev/shm (PIPELINE_LOAD_SCRATCH names any folder).
    memory = await mkdtemp(join(tmpdir(), 'pipeline-memory-'));
    process.env.PIPELINE_LOAD_SCRATCH = memory;
    ls = Array.from({ length: 6 }, (_, i) => JSON.stringify({ i, pad: 'x'.repeat(300) }));
    files = await Promise.all(
      ls.map(async (l, i) => {
        const file = join(dir, `r${i}.ndjson.gz`);
        const bytes = gzipSync(`${l}\n`);
        await writeFile(file, bytes);
        return { file, size: bytes.length };
      }),
    );
  });
  afterEach(async () => {
    delete process.env.PIPELINE_LOAD_SCRATCH;
    await rm(dir, { recursive: true, force: true });
    await rm(memory, { recursive: true, force: true });
  });
  const own = () => join(memory, `pipeline-scratch-${process.getuid!()}`);
  const target = () => 2 * (Buffer.byteLength(ls[0]!) + 1);

  it.skipIf(!process.getuid)("writes them in memory, owner-only and marked with the warehouse's, and removes none of another's", async () => {
    const out = await intoPieces(files, dir, target());
    expect(out.scratch).toHaveLength(3);
    expect(out.read).toEqual(out.scratch);
    expect(out.scratch.every((f) => f.startsWith(`${own()}/load-${process.pid}-`))).toBe(true);
    expect((await stat(own())).mode & 0o777).toBe(0o700);
    for (const f of out.scratch) expect((await stat(f)).mode & 0o777).toBe(0o600);
    // Nothing in the warehouse's folder; every line read back, in order.
    expect(await readdir(scratchDir(dir)).catch(() => [])).toEqual([]);
    const texts = await Promise.all(out.read.map(async (f) => gunzipSync(await readFile(f)).toString('utf8')));
    expect(texts.join('')).toBe(ls.map((l) => `${l}\n`).join(''));
    // Told apart by warehouse: another warehouse's check sees none of them.
    expect(memoryPiecesOf(dir).sort()).toEqual([...out.scratch].sort());
    expect(memoryPiecesOf(join(dir, 'other'))).toEqual([]);
    for (const f of out.scratch) await removeInflated(f);
    expect(memoryPiecesOf(dir)).toEqual([]);
  });

  it('writes them in the warehouse folder when told (disk), or when the memory folder cannot be trusted or has no room', async () => {
    process.env.PIPELINE_LOAD_SCRATCH = 'disk';
    const onDisk = await intoPieces(files, dir, target());
    expect(onDisk.scratch).toHaveLength(3);
    expect(onDisk.scratch.every((f) => f.startsWith(scratchDir(dir)))).toBe(true);
    // A folder others can write into is not a place for raw bodies.
    process.env.PIPELINE_LOAD_SCRATCH = memory;
    await mkdir(own(), { recursive: true });
    await chmod(own(), 0o777);
    const refused = await intoPieces(files, dir, target());
    expect(refused.scratch.every((f) => f.startsWith(scratchDir(dir)))).toBe(true);
    expect(await readdir(own())).toEqual([]);
    // Owner-only again: memory, unless the pieces would leave less than four times their size free.
    await chmod(own(), 0o700);
    expect(memoryScratch(dir, 1 << 20)?.()).toMatch(new RegExp(`^${own()}/load-${process.pid}-[0-9a-f]{12}-[0-9a-f]{8}\\.ndjson\\.gz$`));
    expect(memoryScratch(dir, 2 ** 52)).toBeUndefined();
  });

  it('uses /dev/shm by default only when it is a memory file system (tmpfs)', () => {
    delete process.env.PIPELINE_LOAD_SCRATCH;
    let tmpfs = false;
    try {
      tmpfs = statfsSync('/dev/shm').type === 0x01021994;
    } catch {
      // No /dev/shm: the disk.
    }
    const name = memoryScratch(dir, 1 << 20)?.();
    if (tmpfs && process.getuid) expect(name?.startsWith(`/dev/shm/pipeline-scratch-${process.getuid()}/`)).toBe(true);
    else expect(name).toBeUndefined();
  });

  it.skipIf(!process.getuid)('cuts pieces of 1 MiB of bodies by default in memory, and of 2 MiB on the disk', async () => {
    // 30 small files of about 100 KB of bodies each (about 3 MB).
    const big = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const file = join(dir, `b${i}.ndjson.gz`);
        const bytes = gzipSync(`${lines(1, 40 + i, 15_000)[0]}\n`);
        await writeFile(file, bytes);
        return file;
      }),
    );
    const inflatedOf = async (f: string) => gunzipSync(await readFile(f)).length;
    const inMemory = cutInPieces(big, dir, { room: 1 << 20 });
    expect(inMemory.pieces.scratch.every((f) => f.startsWith(own()))).toBe(true);
    const memorySizes = await Promise.all(inMemory.pieces.scratch.map(inflatedOf));
    expect(Math.max(...memorySizes)).toBeLessThanOrEqual(1 << 20);
    expect(memorySizes.length).toBeGreaterThanOrEqual(3);
    process.env.PIPELINE_LOAD_SCRATCH = 'disk';
    const onDisk = cutInPieces(big, dir, { room: 1 << 20 });
    expect(onDisk.pieces.scratch.every((f) => f.startsWith(scratchDir(dir)))).toBe(true);
    const diskSizes = await Promise.all(onDisk.pieces.scratch.map(inflatedOf));
    expect(Math.max(...diskSizes)).toBeGreaterThan(1 << 20);
    expect(Math.max(...diskSizes)).toBeLessThanOrEqual(2 << 20);
    expect(diskSizes.length).toBeLessThan(memorySizes.length);
  });

  it('writes a piece memory refuses on the disk, and those after it; removes every piece it wrote when the disk fails too', async () => {
    let n = 0;
    const names = () => (n++ === 0 ? join(memory, 'first.ndjson.gz') : join(memory, 'no-such-folder', `${n}.ndjson.gz`));
    const out = pieceWriter(dir, 1, names);
    expect(out.write(Buffer.from('a'))).toBe(join(memory, 'first.ndjson.gz'));
    const second = out.write(Buffer.from('bc'));
    expect(second.startsWith(scratchDir(dir))).toBe(true);
    expect(await readFile(second, 'utf8')).toBe('bc');
    // Memory is not asked again once it refused: the third goes to the disk too.
    expect(out.write(Buffer.from('d')).startsWith(scratchDir(dir))).toBe(true);
    expect(n).toBe(2);
    expect(out.written).toHaveLength(3);
    out.removeAll();
    expect(existsSync(join(memory, 'first.ndjson.gz')) || existsSync(second)).toBe(false);
    // Memory refuses, and the warehouse's scratch folder cannot be made (a file in its place).
    const blocked = join(dir, 'blocked');
    await mkdir(blocked);
    await writeFile(scratchDir(blocked), '');
    let k = 0;
    const failing = pieceWriter(blocked, 1, () => (k++ === 0 ? join(memory, 'kept.ndjson.gz') : join(memory, 'no-such-folder', 'x.ndjson.gz')));
    failing.write(Buffer.from('a'));
    expect(() => failing.write(Buffer.from('b'))).toThrow(/EEXIST|ENOTDIR/);
    failing.removeAll();
    expect(existsSync(join(memory, 'kept.ndjson.gz'))).toBe(false);
    // A cut that fails midway leaves none of its pieces: a file that cannot be read after one was written.
    process.env.PIPELINE_LOAD_SCRATCH = 'disk';
    await expect(intoPieces([...files.slice(0, 4), { file: join(dir, 'gone.ndjson.gz'), size: 1 }], dir, target())).rejects.toThrow(/ENOENT/);
    expect(await readdir(scratchDir(dir)).catch(() => [])).toEqual([]);
  });

  it.skipIf(!process.getuid)("clears the pieces in memory of a load whose process is gone, never a live one's, another warehouse's only when old", async () => {
    const mine = (await intoPieces(files, dir, target())).scratch;
    const gone = join(own(), 'load-999999999-0123456789ab-0badf00d.ndjson.gz');
    const goneOld = join(own(), 'load-999999998-0123456789ab-0badf00e.ndjson.gz');
    await writeFile(gone, '');
    await writeFile(goneOld, '');
    const hoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(goneOld, hoursAgo, hoursAgo);
    // A piece of this warehouse from a process that is gone.
    const goneHere = memoryScratch(dir, 1)!().replace(`load-${process.pid}-`, 'load-999999997-');
    await writeFile(goneHere, '');
    await clearScratch(dir);
    // Another warehouse's recent piece stays (its process may be in another pid namespace, loading).
    expect((await readdir(own())).sort()).toEqual([...mine.map((f) => f.slice(own().length + 1)), 'load-999999999-0123456789ab-0badf00d.ndjson.gz'].sort());
  });
});
