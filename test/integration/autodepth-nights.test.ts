import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedPipeline } from '../../src/config/index.js';
import { ledgerReport } from '../../src/ops/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { autoNight, checkedDepth, GONE, MID, pipelineFile, rankOn, tasksOf, TOP10 } from './autodepth-helpers.js';
import { tempDir } from './helpers.js';

/**
 * `depth: auto` over three nights of the emulator. Each job tracks one domain on its own keyword,
 * and the rank profiles move each domain between bands night by night. The keywords are chosen so
 * that none has its sweep night on 03-02 or 03-03 (sweep_every 7), except running socks on 03-03.
 * The `rival` job tracks its own domain (never ranked) and a competitor followed to 30.
 * The rules are tested at those settings (margin 10, sweep_every 7), stated in the file, not at the
 * defaults: the keywords' sweep nights are picked for sweep_every 7.
 */
const yaml = `name: autodepth
jobs:
${[
  ['fall', 'trail running shoes', 'fall.example'],
  ['jump', 'best running shoes', 'jump.example'],
  ['exit', 'waterproof hiking boots', 'exit.example'],
  ['entry', 'running socks', 'entry.example'],
]
  .map(
    ([name, keyword, domain]) => `  - kind: serp
    name: ${name}
    depth: auto
    auto_depth: { margin: 10, sweep_every: 7 }
    locations: [2840]
    keywords: [${keyword}]
    track_domains: [${domain}]`,
  )
  .join('\n')}
  - kind: serp
    name: rival
    depth: auto
    auto_depth: { margin: 10, sweep_every: 7, competitors: [rival.example], competitor_depth: 30 }
    locations: [2840]
    keywords: [trail running socks]
    track_domains: [own.example, rival.example]
`;

const RIVAL = (p: typeof TOP10) => ({ 'own.example': GONE, 'rival.example': p });

const NIGHTS: Record<string, Record<string, typeof TOP10>> = {
  '2026-03-01': { 'fall.example': TOP10, 'jump.example': MID, 'exit.example': TOP10, 'entry.example': GONE, ...RIVAL(TOP10) },
  '2026-03-02': { 'fall.example': MID, 'jump.example': TOP10, 'exit.example': GONE, 'entry.example': MID, ...RIVAL(MID) },
  '2026-03-03': { 'fall.example': MID, 'jump.example': TOP10, 'exit.example': GONE, 'entry.example': MID, ...RIVAL(MID) },
};

describe('depth: auto over three nights of the emulator', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let pipeline: LoadedPipeline;
  const runs: Record<string, string> = {};
  const tasks = (day: string) => withWarehouse(tmp.dir, (wh) => tasksOf(wh, runs[day]!));

  beforeAll(async () => {
    tmp = await tempDir('pipeline-autodepth-');
    pipeline = await pipelineFile(tmp.dir, yaml);
    for (const [day, profiles] of Object.entries(NIGHTS)) {
      const s = await autoNight(pipeline, tmp.dir, day, profiles);
      expect(s.state).toBe('completed');
      runs[day] = s.runId;
    }
  }, 55_000);
  afterAll(() => tmp?.cleanup());

  it('the first night sweeps every series at max_depth', async () => {
    const t = await tasks('2026-03-01');
    expect(t).toHaveLength(5);
    expect(t.every((x) => x.depth === 100 && x.reason === 'auto:sweep')).toBe(true);
  });

  it("a fall: seen at 1-10, absent within tonight's 20, bought again at 100 the same night and measured", async () => {
    const before = await rankOn(tmp.dir, 'trail running shoes', 'fall.example', '2026-03-01');
    expect(before!.rank).toBeLessThanOrEqual(10);
    const night = (await tasks('2026-03-02')).filter((x) => x.keyword === 'trail running shoes');
    expect(night.map((x) => [x.depth, x.reason, x.state])).toEqual([
      [Math.ceil((before!.rank! + 10) / 10) * 10, 'auto:seen', 'collected'],
      [100, 'auto:escalation', 'collected'],
    ]);
    // The escalation's deeper check supersedes the shallow one: the fall is measured, not lost.
    expect(await checkedDepth(tmp.dir, 'trail running shoes', '2026-03-02')).toBe(100);
    const after = await rankOn(tmp.dir, 'trail running shoes', 'fall.example', '2026-03-02');
    expect(after).toMatchObject({ is_lost: false, checked_depth: 100 });
    expect(after!.rank).toBeGreaterThan(20);
    // The next night buys the block that holds its new rank plus the margin.
    const next = (await tasks('2026-03-03')).filter((x) => x.keyword === 'trail running shoes');
    expect(next[0]).toMatchObject({ reason: 'auto:seen', depth: Math.min(100, Math.ceil((after!.rank! + 10) / 10) * 10) });
  });

  it("a jump up: seen at 31-100, found within tonight's depth near the top, no escalation; the next night is shallower", async () => {
    const before = await rankOn(tmp.dir, 'best running shoes', 'jump.example', '2026-03-01');
    expect(before!.rank).toBeGreaterThan(30);
    const night = (await tasks('2026-03-02')).filter((x) => x.keyword === 'best running shoes');
    expect(night.map((x) => x.reason)).toEqual(['auto:seen']);
    const after = await rankOn(tmp.dir, 'best running shoes', 'jump.example', '2026-03-02');
    expect(after!.rank).toBeLessThanOrEqual(10);
    const next = (await tasks('2026-03-03')).filter((x) => x.keyword === 'best running shoes');
    expect(next.map((x) => [x.reason, x.depth])).toEqual([['auto:seen', Math.ceil((after!.rank! + 10) / 10) * 10]]);
  });

  it('an exit: gone from the top 100, the escalation records it as not within max_depth', async () => {
    const night = (await tasks('2026-03-02')).filter((x) => x.keyword === 'waterproof hiking boots');
    expect(night.map((x) => x.reason)).toEqual(['auto:seen', 'auto:escalation']);
    expect(await rankOn(tmp.dir, 'waterproof hiking boots', 'exit.example', '2026-03-02')).toMatchObject({
      rank: null,
      is_lost: true,
      checked_depth: 100,
    });
    // Not seen since: the next night looks at the first block only.
    const next = (await tasks('2026-03-03')).filter((x) => x.keyword === 'waterproof hiking boots');
    expect(next.map((x) => [x.reason, x.depth])).toEqual([['auto:shallow', 10]]);
  });

  it("an entry: unseen at the shallow look, found at the series' sweep night", async () => {
    expect(await rankOn(tmp.dir, 'running socks', 'entry.example', '2026-03-01')).toBeUndefined();
    const shallow = (await tasks('2026-03-02')).filter((x) => x.keyword === 'running socks');
    expect(shallow.map((x) => [x.reason, x.depth])).toEqual([['auto:shallow', 10]]);
    expect(await rankOn(tmp.dir, 'running socks', 'entry.example', '2026-03-02')).toBeUndefined();
    const sweep = (await tasks('2026-03-03')).filter((x) => x.keyword === 'running socks');
    expect(sweep.map((x) => [x.reason, x.depth])).toEqual([['auto:sweep', 100]]);
    const seen = await rankOn(tmp.dir, 'running socks', 'entry.example', '2026-03-03');
    expect(seen).toMatchObject({ is_new: true, checked_depth: 100 });
    expect(seen!.rank).toBeGreaterThan(30);
  });

  it('a competitor that fell is bought again to competitor_depth, not max_depth, and reads "beyond 30"', async () => {
    const before = await rankOn(tmp.dir, 'trail running socks', 'rival.example', '2026-03-01');
    expect(before!.rank).toBeLessThanOrEqual(10);
    const night = (await tasks('2026-03-02')).filter((x) => x.keyword === 'trail running socks');
    expect(night.map((x) => [x.depth, x.reason, x.state])).toEqual([
      [20, 'auto:seen', 'collected'],
      [30, 'auto:escalation', 'collected'],
    ]);
    // It ranks 31-100 tonight: absent within the 30 bought, which the row says.
    expect(await rankOn(tmp.dir, 'trail running socks', 'rival.example', '2026-03-02')).toMatchObject({
      rank: null,
      is_lost: true,
      checked_depth: 30,
    });
    // Not seen since, and your own domain never ranked: the next night looks at the first block.
    const next = (await tasks('2026-03-03')).filter((x) => x.keyword === 'trail running socks');
    expect(next.map((x) => [x.reason, x.depth])).toEqual([['auto:shallow', 10]]);
  });

  it('the ledger groups the charges by depth reason', async () => {
    const rows = await withWarehouse(tmp.dir, (wh) => ledgerReport(wh, { by: ['run', 'depth_reason'] }));
    const night2 = rows.filter((r) => r.run === runs['2026-03-02'] && r.depth_reason !== '');
    expect(new Map(night2.map((r) => [r.depth_reason, r.tasks]))).toEqual(
      new Map([
        ['auto:escalation', 3],
        ['auto:seen', 4],
        ['auto:shallow', 1],
      ]),
    );
    expect(night2.every((r) => Number(r.charge_cny) > 0)).toBe(true);
  });
});
