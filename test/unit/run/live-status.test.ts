import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIVE_FILE, LiveStatus, type LiveRun } from '../../../src/run/live-status.js';
import { progressLine, type RunProgress } from '../../../src/run/progress.js';

const read = async (dir: string) => JSON.parse(await readFile(join(dir, LIVE_FILE), 'utf8')) as LiveRun;
const figures = (posted: number): RunProgress => ({
  postsLeft: 40 - posted,
  posted,
  pending: posted,
  ready: 0,
  collected: 0,
  failed: 0,
  refetched: 0,
  chargedCny: '0',
  timeLeftMs: null,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LiveStatus: the file `pipeline status` reads while a run holds the database', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pipeline-live-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the last progress line of a burst once its second is up, not at the next event', async () => {
    const s = new LiveStatus(dir, 'p', () => new Date()); // written at once, with no progress yet
    // Within the second of that write: held back.
    s.event({ kind: 'collect', ...figures(1) });
    s.event({ kind: 'collect', ...figures(39) });
    s.event({ kind: 'collect', ...figures(40) }); // the last of the burst
    expect((await read(dir)).progress).toBeNull();
    await sleep(1_300);
    expect((await read(dir)).progress).toBe(progressLine(figures(40)));
    s.end();
  });

  it('writes nothing after end: the file of a finished run does not come back', async () => {
    const s = new LiveStatus(dir, 'p', () => new Date());
    s.event({ kind: 'collect', ...figures(1) });
    s.event({ kind: 'collect', ...figures(2) }); // owed a write in a second
    s.end();
    await sleep(1_300);
    await expect(stat(join(dir, LIVE_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
