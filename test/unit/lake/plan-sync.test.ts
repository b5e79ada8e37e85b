import { describe, expect, it } from 'vitest';
import { isLayoutKey } from '../../../src/lake/local-layout.js';
import { sameFiles } from '../../../src/lake/manifest.js';
import { planSync, recordedSha, type HashedFile } from '../../../src/lake/plan-sync.js';

const file = (rel: string, size: number, sha256: string, mtimeMs = 1000): HashedFile => ({
  rel,
  path: `/wh/${rel}`,
  size,
  mtimeMs,
  sha256,
});
const entry = (size: number, sha256: string, mtime_ms = 1000) => ({ size, sha256, mtime_ms });

describe('planSync', () => {
  const a = 'parquet/t/date=2026-01-01/part-0.parquet';
  const b = 'parquet/t/date=2026-01-02/part-0.parquet';
  const c = 'parquet/t/date=2026-01-02/part-1.parquet';

  it('skips what the listing shows at its size and the manifest vouches for; uploads the rest; removes what is gone', () => {
    const plan = planSync(
      [file(a, 10, 'aa'), file(b, 20, 'bb2'), file('serving.duckdb', 5, 'ss')],
      { [a]: entry(10, 'aa'), [b]: entry(20, 'bb1'), [c]: entry(7, 'cc') },
      new Map([
        [a, 10],
        [b, 20],
        [c, 7],
      ]),
    );
    expect(plan.skip.map((f) => f.rel)).toEqual([a]);
    expect(plan.upload.map((f) => f.rel)).toEqual(['serving.duckdb']);
    expect(plan.verify.map((f) => f.rel)).toEqual([b]); // same size, other bytes recorded: read its metadata
    expect(plan.remove).toEqual([c]);
  });

  it('uploads when the object was deleted in the lake although the manifest lists it', () => {
    const plan = planSync([file(a, 10, 'aa')], { [a]: entry(10, 'aa') }, new Map());
    expect(plan.upload.map((f) => f.rel)).toEqual([a]);
  });

  it('uploads when the sizes differ, whatever the manifest says', () => {
    const plan = planSync([file(a, 11, 'aa')], { [a]: entry(10, 'aa') }, new Map([[a, 10]]));
    expect(plan.upload.map((f) => f.rel)).toEqual([a]);
  });

  it('verifies objects left by an interrupted sync (in the listing, not in any manifest)', () => {
    const plan = planSync([file(a, 10, 'aa')], {}, new Map([[a, 10]]));
    expect(plan.verify.map((f) => f.rel)).toEqual([a]);
  });
});

describe('recordedSha', () => {
  it('trusts the manifest only for an unchanged size and modification time', () => {
    const m = { x: entry(10, 'sha', 5) };
    expect(recordedSha({ rel: 'x', path: 'x', size: 10, mtimeMs: 5 }, m)).toBe('sha');
    expect(recordedSha({ rel: 'x', path: 'x', size: 10, mtimeMs: 6 }, m)).toBeUndefined();
    expect(recordedSha({ rel: 'x', path: 'x', size: 11, mtimeMs: 5 }, m)).toBeUndefined();
    expect(recordedSha({ rel: 'y', path: 'y', size: 10, mtimeMs: 5 }, m)).toBeUndefined();
  });
});

describe('isLayoutKey', () => {
  it('owns parquet/ and serving.duckdb, not temporary files, the manifest or anything else under the prefix', () => {
    expect(isLayoutKey('parquet/t/date=2026-01-01/part-0.parquet')).toBe(true);
    expect(isLayoutKey('serving.duckdb')).toBe(true);
    expect(isLayoutKey('parquet/t/date=2026-01-01/.part-0.parquet.tmp')).toBe(false);
    expect(isLayoutKey('parquet/t/_temporary/part-0.parquet')).toBe(false);
    expect(isLayoutKey('_manifest.json')).toBe(false);
    expect(isLayoutKey('_lake_probe/x')).toBe(false);
    expect(isLayoutKey('notes/readme.txt')).toBe(false);
    expect(isLayoutKey('warehouse.duckdb')).toBe(false);
  });
});

describe('sameFiles', () => {
  it('compares keys, sizes, hashes and times', () => {
    expect(sameFiles({ a: entry(1, 'x') }, { a: entry(1, 'x') })).toBe(true);
    expect(sameFiles({ a: entry(1, 'x') }, { a: entry(1, 'y') })).toBe(false);
    expect(sameFiles({ a: entry(1, 'x') }, { a: entry(1, 'x'), b: entry(1, 'x') })).toBe(false);
    expect(sameFiles({ a: entry(1, 'x', 1) }, { a: entry(1, 'x', 2) })).toBe(false);
  });
});
