import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeDurably } from '../../../src/warehouse/landing/write-durably.js';

describe('writeDurably', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pipeline-durably-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes the file whole, making its folder', async () => {
    await writeDurably(join(dir, 'day', 'a.ndjson.gz'), Buffer.from('x\n'));
    expect(await readFile(join(dir, 'day', 'a.ndjson.gz'), 'utf8')).toBe('x\n');
    expect(await readdir(join(dir, 'day'))).toEqual(['a.ndjson.gz']);
  });

  it('leaves no temp file behind when the write fails', async () => {
    // The rename is refused: a folder holds the name.
    await mkdir(join(dir, 'taken.ndjson.gz', 'inside'), { recursive: true });
    await expect(writeDurably(join(dir, 'taken.ndjson.gz'), Buffer.alloc(1 << 20))).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['taken.ndjson.gz']);
  });
});
