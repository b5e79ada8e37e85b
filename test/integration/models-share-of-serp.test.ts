import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runModels } from '../../src/models/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger, tempDir } from './helpers.js';

// Ten tracked domains (the most a job takes) placed by rank profiles, checked on the same day
// at depth 100 in one warehouse and at depth 10 in another: the top-10 share must not depend
// on the depth bought, and only the deep check may say anything of ranks 11-100.
const TRACKED = ['mine.example', 'rival.example', ...Array.from({ length: 8 }, (_, i) => `c${i + 1}.example`)];
const PROFILES = {
  'mine.example': { top10: 0.4, top11to30: 0.2, beyond100: 0.4 },
  'rival.example': { top10: 0.8, top11to30: 0.1, beyond100: 0.05 },
  ...Object.fromEntries(TRACKED.slice(2).map((d) => [d, { top10: 0.1, top11to30: 0.2, beyond100: 0.3 }])),
};
const KEYWORDS = Array.from({ length: 24 }, (_, i) => `trail running shoes ${i}`);

interface Row {
  domain: string;
  keywords_checked: number;
  keywords_covered_top10: number;
  keywords_top10: number;
  results_top10: number;
  visibility_top10: number;
  share_of_serp: number | null;
  keyword_share_top10: number | null;
  share_among_tracked: number | null;
  keywords_covered_top100: number;
  keywords_top100: number;
  keyword_share_top100: number | null;
}

const yaml = (depth: number) =>
  [
    'name: shares',
    'jobs:',
    '  - kind: serp',
    '    name: ranks',
    `    depth: ${depth}`,
    '    locations: [2840]',
    `    track_domains: [${TRACKED.join(', ')}]`,
    `    keywords: [${KEYWORDS.join(', ')}]`,
  ].join('\n');

const SELECT = `select domain, keywords_checked::int as keywords_checked, keywords_covered_top10::int as keywords_covered_top10,
  keywords_top10::int as keywords_top10, results_top10::int as results_top10, visibility_top10, share_of_serp, keyword_share_top10,
  share_among_tracked, keywords_covered_top100::int as keywords_covered_top100, keywords_top100::int as keywords_top100, keyword_share_top100
  from share_of_serp_daily where check_date = $1 order by domain`;

describe('share_of_serp_daily on emulator nights (10 tracked domains with rank profiles)', () => {
  let sandbox: SandboxHandle;
  let deep: Awaited<ReturnType<typeof tempDir>>;
  let shallow: Awaited<ReturnType<typeof tempDir>>;
  let clock = movingClock('2026-03-01T09:00:00Z');

  const night = async (dir: string, depth: number) => {
    const s = await runPipeline({
      pipeline: parsePipeline(yaml(depth), 'shares.yaml', {}),
      file: 'shares.yaml',
      warehouseDir: dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testshares',
      logger: silentLogger,
      pollIntervalMs: 50,
      collectTimeoutMs: 30_000,
      now: () => clock(),
      models: false,
    });
    expect(s.state).toBe('completed');
    const m = await runModels({ warehouseDir: dir, test: true });
    expect(m.builds.filter((b) => b.status === 'failed')).toEqual([]);
    expect(m.tests.filter((t) => t.status !== 'passed')).toEqual([]);
    return m;
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 11, now: () => clock(), readyAfterMs: 50, rankProfiles: PROFILES });
    deep = await tempDir('pipeline-sos-deep-');
    shallow = await tempDir('pipeline-sos-shallow-');
    await night(deep.dir, 100);
    await night(shallow.dir, 10);
  }, 120_000);
  afterAll(async () => {
    await sandbox?.close();
    await deep?.cleanup();
    await shallow?.cleanup();
  });

  it('a row per tracked domain; the top-10 figures are the same whether the night bought 100 results or 10', async () => {
    const a = await withWarehouse(deep.dir, (db) => db.all<Row>(SELECT, ['2026-03-01']));
    const b = await withWarehouse(shallow.dir, (db) => db.all<Row>(SELECT, ['2026-03-01']));
    expect(a.map((r) => r.domain)).toEqual([...TRACKED].sort());
    const top10 = (r: Row) => ({
      domain: r.domain,
      checked: r.keywords_checked,
      covered: r.keywords_covered_top10,
      top10: r.keywords_top10,
      results: r.results_top10,
      share: r.share_of_serp,
      keywordShare: r.keyword_share_top10,
      amongTracked: r.share_among_tracked,
    });
    expect(b.map(top10)).toEqual(a.map(top10));
    for (const r of a) expect(r).toMatchObject({ keywords_checked: KEYWORDS.length, keywords_covered_top10: KEYWORDS.length });
    for (const r of a) expect(r.share_of_serp!).toBeGreaterThanOrEqual(0);
    expect(a.reduce((s, r) => s + r.share_of_serp!, 0)).toBeLessThanOrEqual(1);
    expect(a.find((r) => r.domain === 'rival.example')!.keywords_top10).toBeGreaterThan(0);
    expect(a.reduce((s, r) => s + (r.share_among_tracked ?? 0), 0)).toBeCloseTo(1, 9);

    // Only the deep night says what lies within 100; the shallow one says nothing (not "not ranked").
    for (const r of b) expect(r).toMatchObject({ keywords_covered_top100: 0, keywords_top100: 0, keyword_share_top100: null });
    for (const r of a) expect(r.keywords_covered_top100).toBe(KEYWORDS.length);
    expect(a.some((r) => r.keywords_top100 > r.keywords_top10)).toBe(true);
  });

  it('matches the definition computed straight from the served items and the CTR seed', async () => {
    await withWarehouse(deep.dir, async (db) => {
      const expected = await db.all<{ domain: string; share: number; top100: number }>(`
        with items as (
          select i.task_id, regexp_replace(lower(i.domain), '^www\\.', '') as domain, i.rank_absolute::int as rank
          from serp_items as i where i.type <> 'paid' and i.domain is not null
        ),
        page as (select sum(ctr) as w from ctr_weights where position <= 10)
        select d.domain,
               coalesce((select sum(w.ctr) from items as i join ctr_weights as w on w.position = i.rank
                         where i.domain = d.domain and i.rank <= 10), 0)::double / (${KEYWORDS.length} * (select w from page))::double as share,
               (select count(distinct task_id) from items as i where i.domain = d.domain and i.rank <= 100)::int as top100
        from (select unnest([${TRACKED.map((d) => `'${d}'`).join(', ')}]) as domain) as d
        order by d.domain`);
      const got = await db.all<Row>(SELECT, ['2026-03-01']);
      for (const [i, e] of expected.entries()) {
        expect(got[i]!.domain).toBe(e.domain);
        expect(got[i]!.share_of_serp).toBeCloseTo(e.share, 12);
        expect(got[i]!.keywords_top100).toBe(e.top100);
      }
    });
  });

  it('a night shallower than 10 keeps its rows but covers neither figure; the build is incremental', async () => {
    clock = movingClock('2026-03-02T09:00:00Z');
    const m = await night(deep.dir, 5);
    expect(m.builds.find((b) => b.name === 'share_of_serp_daily')).toMatchObject({ status: 'built', mode: 'incremental' });
    const rows = await withWarehouse(deep.dir, (db) => db.all<Row>(SELECT, ['2026-03-02']));
    expect(rows).toHaveLength(TRACKED.length);
    for (const r of rows)
      expect(r).toMatchObject({
        keywords_checked: KEYWORDS.length,
        keywords_covered_top10: 0,
        keywords_top10: 0,
        share_of_serp: null,
        keyword_share_top10: null,
        keywords_covered_top100: 0,
        keyword_share_top100: null,
      });
    // The first night is kept as built.
    expect(await withWarehouse(deep.dir, (db) => db.all<Row>(SELECT, ['2026-03-01']))).toHaveLength(TRACKED.length);
  });
});
