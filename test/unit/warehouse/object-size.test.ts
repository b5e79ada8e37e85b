import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { longestLine } from '../../../src/warehouse/normalize/inflate.js';
import { MAX_OBJECT_BYTES, objectSizeFor } from '../../../src/warehouse/normalize/object-size.js';

describe('the longest line of a landed file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'longest-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('counts bytes across read chunks, in gzip and plain text, with or without a last newline', async () => {
    // 200,000 bytes of UTF-8 (the é is two), read in 64 KiB chunks.
    const long = `{"a":"${'x'.repeat(99_992)}${'é'.repeat(50_000)}"}`;
    const text = `{"s":1}\n${long}\n{"b":2}`;
    expect(Buffer.byteLength(long)).toBe(200_000);
    await writeFile(join(dir, 'a.ndjson.gz'), gzipSync(text));
    await writeFile(join(dir, 'a.ndjson'), text);
    expect(await longestLine(join(dir, 'a.ndjson.gz'))).toBe(200_000);
    expect(await longestLine(join(dir, 'a.ndjson'))).toBe(200_000);
    await writeFile(join(dir, 'b.ndjson'), `{"s":1}\n${long}`);
    expect(await longestLine(join(dir, 'b.ndjson'))).toBe(200_000);
  });
});

describe('the maximum_object_size a line needs', () => {
  it("is DuckDB's default for small lines, a MiB above the line for larger ones, none past 1 GiB", () => {
    expect(objectSizeFor(1000)).toBe(16 << 20);
    expect(objectSizeFor(40 << 20)).toBe(41 << 20);
    expect(objectSizeFor((40 << 20) + 5)).toBe(41 << 20);
    expect(objectSizeFor(MAX_OBJECT_BYTES)).toBe(MAX_OBJECT_BYTES + (1 << 20));
    expect(objectSizeFor(MAX_OBJECT_BYTES + 1)).toBeUndefined();
  });
});
