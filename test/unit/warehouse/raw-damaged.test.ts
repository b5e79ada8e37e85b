import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rawFileDamage, readableLines } from '../../../src/warehouse/landing/damaged.js';
import { compactRaw, type Warehouse } from '../../../src/warehouse/index.js';
import { compactFixture, land, response, tempWarehouse } from './helpers.js';

// Issue 43: the checks that keep a damaged landed file out of segments and replays.

const line = (i: number) => JSON.stringify({ call_id: `c${i}`, body: { n: i } });
const member = (i: number) => gzipSync(`${line(i)}\n`);

describe('readableLines', () => {
  it('reads every whole member of a segment, past a damaged one in the middle, and drops a cut-off last one', () => {
    const ms = [0, 1, 2, 3].map(member);
    const torn = Buffer.from(ms[1]!);
    torn[torn.length - 12] = torn[torn.length - 12]! ^ 0xff; // a byte of its deflate data flipped: its CRC fails
    const seg = Buffer.concat([ms[0]!, torn, ms[2]!, ms[3]!.subarray(0, ms[3]!.length - 5)]);
    expect(readableLines(seg)).toEqual([line(0), line(2)]);
  });
});

describe('rawFileDamage', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'raw-damage-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('finds a file cut short, one cut at a member end (fewer answers than indexed), an empty one, a missing one; a whole one passes', async () => {
    const f = join(dir, 'x.ndjson.gz');
    const whole = Buffer.concat([member(0), member(1)]);
    await writeFile(f, whole);
    expect(await rawFileDamage(f, 2)).toBeNull();
    expect(await rawFileDamage(f, 3)).toMatch(/holds 2 answer\(s\) where the raw index has 3/);
    await writeFile(f, whole.subarray(0, whole.length - 10));
    expect(await rawFileDamage(f, 2)).toMatch(/does not inflate to its end/);
    await writeFile(f, '');
    expect(await rawFileDamage(f)).toMatch(/empty/);
    expect(await rawFileDamage(join(dir, 'gone.ndjson.gz'))).toMatch(/ENOENT/);
  });
});

describe('compactRaw with a piece gone', () => {
  let wh: Warehouse;
  let dir: string;
  let done: () => Promise<void>;
  beforeEach(async () => {
    ({ wh, dir, done } = await tempWarehouse());
  });
  afterEach(async () => done());

  it('compacts the others and names the missing one, without a crash', async () => {
    const body = await compactFixture('serp.task_get.advanced.small.json');
    await land(wh, response('/v3/serp/engA/organic/task_get/advanced/a', body), response('/v3/serp/engA/organic/task_get/advanced/b', body), response('/v3/serp/engA/organic/task_get/advanced/c', body));
    const files = await wh.all<{ file: string }>(`SELECT DISTINCT file FROM raw_responses ORDER BY file`);
    expect(files).toHaveLength(3);
    await rm(join(dir, files[0]!.file));
    const r = await compactRaw(wh);
    expect(r.segments).toBe(1);
    expect(r.damaged.map((d) => [d.file, d.keptAs])).toEqual([[files[0]!.file, null]]);
    const [seg] = await wh.all<{ file: string }>(`SELECT DISTINCT file FROM raw_responses`);
    expect((await readFile(join(dir, seg!.file))).length).toBeGreaterThan(0);
  });
});
