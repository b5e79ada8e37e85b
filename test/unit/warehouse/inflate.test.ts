import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clearScratch, inflate, removeInflated, scratchDir, scratchFile, intoPieces } from '../../../src/warehouse/inflate.js';

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
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('gives back every line of every file, in order, with a large segment shared between threads', async () => {
    const big = lines(6_000, 1);
    const small = lines(3, 2);
    await writeFile(join(dir, 'big.ndjson.gz'), segment(big));
    await writeFile(join(dir, 'small.ndjson.gz'), segment(small));
    // A file whose last line has no newline still ends its lines.
    await writeFile(join(dir, 'bare.ndjson.gz'), gzipSync('{"bare":true}'));
    expect((await readFile(join(dir, 'big.ndjson.gz'))).length).toBeGreaterThan(8 << 20);
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
    // are joined into one piece (a newline after each), the odd file is read in place.
    const whole = await intoPieces(files, dir, 1 << 30);
    expect(whole.read).toEqual([whole.scratch[0], join(dir, 'odd.ndjson.gz')]);
    expect(whole.scratch).toHaveLength(1);
    expect(gunzipSync(await readFile(whole.scratch[0]!)).toString('utf8')).toBe(`${seg.map((l) => `${l}\n`).join('')}\n${lines(1, 5)[0]}\n\n`);
  });

  it('joins small files in a row into pieces of about the target, so a line without its newline stays apart', async () => {
    const ls = lines(10, 6, 50);
    const files = await Promise.all(
      ls.map(async (l, i) => {
        const file = join(dir, `r${i}.ndjson.gz`);
        // The fourth file's line has no newline at its end: joined, it must not run into the fifth's.
        const bytes = gzipSync(i === 3 ? l : `${l}\n`);
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
    expect(texts.every((t) => Buffer.byteLength(t.replaceAll('\n\n', '\n')) <= target)).toBe(true);
    expect(texts.join('').split('\n').filter((l) => l !== '')).toEqual(ls);
    // A small file alone is read in place.
    expect(await intoPieces(files.slice(0, 1), dir, target)).toEqual({ read: [files[0]!.file], scratch: [] });
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
