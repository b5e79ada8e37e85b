import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSyntheticHistory } from '../../bench/lib/measure-incremental.js';
import { buildModels, discoverModels, DEFAULT_SQL_DIR, testModels, withUpstream, type Model } from '../../src/models/index.js';
import { recordTrackedDomains, Warehouse } from '../../src/warehouse/index.js';
import { RANK_DAY_4, RANK_DAYS_1_2 } from '../fixtures/models/rank-pages.js';
import { insertPages, type Page } from '../fixtures/models/serp-pages.js';
import { tempDir } from './helpers.js';

const HISTORY = `
  select domain, check_date::varchar as date, previous_check_date::varchar as prev_date, rank_absolute as abs, rank_group as grp,
         url, item_type as type, items_on_page as n, previous_rank_absolute as prev, rank_change as change, is_new, is_lost,
         first_seen_date::varchar as first, last_seen_date::varchar as last
  from rank_history where keyword = ? order by check_date, domain`;

describe('rank_history and domain_visibility_daily on hand-worked pages', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let wh: Warehouse;
  let models: Model[];

  beforeEach(async () => {
    tmp = await tempDir('pipeline-models-rank-');
    wh = await Warehouse.open(tmp.dir);
    models = await discoverModels(DEFAULT_SQL_DIR);
  });
  afterEach(async () => {
    wh.close();
    await tmp.cleanup();
  });

  const expectedTrail = [
    {
      domain: 'a.com',
      date: '2026-01-01',
      prev_date: null,
      abs: 4,
      grp: 2,
      url: 'https://a.com/one',
      type: 'organic',
      n: 2,
      prev: null,
      change: null,
      is_new: true,
      is_lost: false,
      first: '2026-01-01',
      last: '2026-01-01',
    },
    {
      domain: 'b.com',
      date: '2026-01-01',
      prev_date: null,
      abs: 2,
      grp: 1,
      url: 'https://b.com/snippet',
      type: 'featured_snippet',
      n: 2,
      prev: null,
      change: null,
      is_new: true,
      is_lost: false,
      first: '2026-01-01',
      last: '2026-01-01',
    },
    {
      domain: 'c.com',
      date: '2026-01-01',
      prev_date: null,
      abs: 6,
      grp: 3,
      url: 'https://c.com/x',
      type: 'organic',
      n: 1,
      prev: null,
      change: null,
      is_new: true,
      is_lost: false,
      first: '2026-01-01',
      last: '2026-01-01',
    },
    {
      domain: 'a.com',
      date: '2026-01-02',
      prev_date: '2026-01-01',
      abs: 2,
      grp: 1,
      url: 'https://a.com/one',
      type: 'organic',
      n: 1,
      prev: 4,
      change: 2,
      is_new: false,
      is_lost: false,
      first: '2026-01-01',
      last: '2026-01-02',
    },
    {
      domain: 'b.com',
      date: '2026-01-02',
      prev_date: '2026-01-01',
      abs: 3,
      grp: 2,
      url: 'https://b.com/guide',
      type: 'organic',
      n: 1,
      prev: 2,
      change: -1,
      is_new: false,
      is_lost: false,
      first: '2026-01-01',
      last: '2026-01-02',
    },
    {
      domain: 'c.com',
      date: '2026-01-02',
      prev_date: '2026-01-01',
      abs: null,
      grp: null,
      url: null,
      type: null,
      n: 0,
      prev: 6,
      change: null,
      is_new: false,
      is_lost: true,
      first: '2026-01-01',
      last: '2026-01-01',
    },
    {
      domain: 'a.com',
      date: '2026-01-04',
      prev_date: '2026-01-02',
      abs: 4,
      grp: 2,
      url: 'https://www.a.com/one',
      type: 'organic',
      n: 1,
      prev: 2,
      change: -2,
      is_new: false,
      is_lost: false,
      first: '2026-01-01',
      last: '2026-01-04',
    },
    {
      domain: 'b.com',
      date: '2026-01-04',
      prev_date: '2026-01-02',
      abs: 1,
      grp: 1,
      url: 'https://b.com/guide',
      type: 'organic',
      n: 1,
      prev: 3,
      change: 2,
      is_new: false,
      is_lost: false,
      first: '2026-01-01',
      last: '2026-01-04',
    },
    {
      domain: 'c.com',
      date: '2026-01-04',
      prev_date: '2026-01-02',
      abs: 9,
      grp: 5,
      url: 'https://c.com/x',
      type: 'organic',
      n: 1,
      prev: null,
      change: null,
      is_new: true,
      is_lost: false,
      first: '2026-01-01',
      last: '2026-01-04',
    },
  ];

  it('tracks every domain: best rank of two URLs, snippet over organic, drop-out and return, failed day absent, later check of a day wins', async () => {
    await insertPages(wh, [...RANK_DAYS_1_2, ...RANK_DAY_4]);
    const builds = await buildModels(wh, models);
    expect(builds.filter((b) => b.status !== 'built' && !b.message?.includes('search_volume'))).toEqual([]);
    expect(await wh.all(HISTORY, ['trail shoes'])).toEqual(expectedTrail);
    // An ad is not a rank; a failed check (01-03) is no row, never rank 0 or 101.
    const [odd] = await wh.all<{ n: number }>(
      `select count(*)::int as n from rank_history where domain = 'd.com' or check_date = '2026-01-03' or rank_absolute in (0, 101)`,
    );
    expect(odd!.n).toBe(0);
    const failures = (
      await testModels(
        wh,
        models.filter((m) => builds.some((b) => b.name === m.name && b.status === 'built')),
      )
    ).filter((t) => t.status !== 'passed');
    expect(failures).toEqual([]);
  });

  it('an incremental build of a new day gives the same rows as a full rebuild, and rebuilds only from the last built day', async () => {
    await insertPages(wh, RANK_DAYS_1_2);
    const first = await buildModels(wh, models);
    expect(first.find((b) => b.name === 'rank_history')).toMatchObject({ status: 'built', mode: 'full', rows: 7 });
    await insertPages(wh, RANK_DAY_4);
    const second = await buildModels(wh, models);
    // Rows of 01-02 (3, rebuilt as the last built day) and 01-04 (3) are written; 01-01 is kept.
    expect(second.find((b) => b.name === 'rank_history')).toMatchObject({ status: 'built', mode: 'incremental', rows: 6 });
    expect(await wh.all(HISTORY, ['trail shoes'])).toEqual(expectedTrail);
    expect(second.find((b) => b.name === 'domain_visibility_daily')).toMatchObject({ status: 'built', mode: 'incremental' });
    const incremental = await wh.all(`select * from rank_history order by all`);
    const visibility = await wh.all(`select * from domain_visibility_daily order by all`);
    await buildModels(wh, models, { fullRefresh: true });
    expect(await wh.all(`select * from rank_history order by all`)).toEqual(incremental);
    expect(await wh.all(`select * from domain_visibility_daily order by all`)).toEqual(visibility);
  });

  it('carries the depth each check asked for and the days since the previous check, across a failed day', async () => {
    await insertPages(
      wh,
      [...RANK_DAYS_1_2, ...RANK_DAY_4].map((p) => ({ ...p, depth: p.date === '2026-01-04' ? 10 : 100 })),
    );
    await buildModels(wh, models);
    const rows = await wh.all(
      `select distinct check_date::varchar as date, checked_depth as depth, previous_checked_depth as prev_depth, days_since_previous_check as days
       from rank_history where keyword = 'trail shoes' order by date`,
    );
    // 01-03 failed: the 01-04 check is two days after the previous successful one, not one.
    expect(rows).toEqual([
      { date: '2026-01-01', depth: 100, prev_depth: null, days: null },
      { date: '2026-01-02', depth: 100, prev_depth: 100, days: 1 },
      { date: '2026-01-04', depth: 10, prev_depth: 100, days: 2 },
    ]);
  });

  it('weighs visibility and share of voice with the ctr_weights seed', async () => {
    await insertPages(wh, [...RANK_DAYS_1_2, ...RANK_DAY_4]);
    await buildModels(wh, models);
    const rows = await wh.all<Record<string, number | string>>(
      `select domain, keywords_checked as checked, keywords_ranked as ranked, round(visibility, 6) as vis,
              round(visibility_share, 6) as pct, round(share_of_voice, 6) as sov
       from domain_visibility_daily where check_date = '2026-01-01' order by domain`,
    );
    const w = Object.fromEntries(
      (await wh.all<{ position: number; ctr: number }>(`select position, ctr from ctr_weights`)).map((r) => [r.position, Number(r.ctr)]),
    );
    const a = w[4]! + w[1]!;
    const total = a + w[2]! + w[6]!;
    const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
    expect(rows).toEqual([
      { domain: 'a.com', checked: 2n, ranked: 2n, vis: r6(a), pct: r6(a / (2 * w[1]!)), sov: r6(a / total) },
      { domain: 'b.com', checked: 2n, ranked: 1n, vis: r6(w[2]!), pct: r6(w[2]! / (2 * w[1]!)), sov: r6(w[2]! / total) },
      { domain: 'c.com', checked: 2n, ranked: 1n, vis: r6(w[6]!), pct: r6(w[6]! / (2 * w[1]!)), sov: r6(w[6]! / total) },
    ]);
    // visibility_pct (deprecated) still holds the same fraction, for readers built on it.
    const [old] = await wh.all<{ differ: number }>(
      `select count(*) filter (where visibility_pct is distinct from visibility_share)::int as differ from domain_visibility_daily`,
    );
    expect(old!.differ).toBe(0);
    const [lost] = await wh.all<{ n: number }>(
      `select count(*)::int as n from domain_visibility_daily where domain = 'c.com' and check_date = '2026-01-02'`,
    );
    expect(lost!.n).toBe(0);
  });
  describe('tracked domains', () => {
    // "trail shoes" is checked by job serp-a of pipeline shop, which tracks www.a.com (the
    // models drop the www.); "road shoes" by serp-b, which tracks c.com only.
    const jobOf = (p: Page): Page => ({ ...p, job: { pipeline: 'shop', job: p.keyword === 'trail shoes' ? 'serp-a' : 'serp-b' } });
    const track = (a: string[], runId: string) =>
      recordTrackedDomains(
        wh,
        { name: 'shop', jobs: [{ name: 'serp-a', track_domains: a }, { name: 'serp-b', track_domains: ['c.com'] }, { name: 'volumes' }] },
        runId,
        new Date('2026-01-05T03:00:00Z'),
      );
    const flags = (keyword: string) =>
      wh.all<{ domain: string; date: string; is_tracked: boolean }>(
        `select domain, check_date::varchar as date, is_tracked from rank_history where keyword = ? order by date, domain`,
        [keyword],
      );
    const trackedOn = async (keyword: string) =>
      [...new Set((await flags(keyword)).filter((r) => r.is_tracked).map((r) => r.domain))].sort();

    it('flags the domains a job tracks on the keywords it checks, and their markets in domain_visibility_daily', async () => {
      await insertPages(wh, [...RANK_DAYS_1_2, ...RANK_DAY_4].map(jobOf));
      await track(['www.a.com'], 'run-1');
      const builds = await buildModels(wh, models);
      expect(builds.filter((b) => b.status !== 'built' && !b.message?.includes('search_volume'))).toEqual([]);
      const trail = await flags('trail shoes');
      expect(trail.filter((r) => r.is_tracked).map((r) => `${r.domain} ${r.date}`)).toEqual([
        'a.com 2026-01-01',
        'a.com 2026-01-02',
        'a.com 2026-01-04',
      ]);
      expect(trail).toHaveLength(expectedTrail.length);
      // a.com ranks on "road shoes" too, but serp-b, which checks it, does not track a.com.
      expect(await flags('road shoes')).toEqual([{ domain: 'a.com', date: '2026-01-01', is_tracked: false }]);
      const vis = await wh.all(`select domain, is_tracked from domain_visibility_daily where check_date = '2026-01-01' order by domain`);
      expect(vis).toEqual([
        { domain: 'a.com', is_tracked: true },
        { domain: 'b.com', is_tracked: false },
        { domain: 'c.com', is_tracked: true },
      ]);
      const failing = (
        await testModels(
          wh,
          models.filter((m) => builds.some((b) => b.name === m.name && b.status === 'built')),
        )
      ).filter((t) => t.status !== 'passed');
      expect(failing).toEqual([]);
    });

    it('a change of the tracked domains rebuilds rank_history in full, so the flag holds for every day; otherwise builds stay incremental', async () => {
      await insertPages(wh, RANK_DAYS_1_2.map(jobOf));
      await track(['a.com'], 'run-1');
      await buildModels(wh, models);
      await insertPages(wh, RANK_DAY_4.map(jobOf));
      const same = await buildModels(wh, models);
      expect(same.find((b) => b.name === 'rank_history')).toMatchObject({ mode: 'incremental' });
      expect(await trackedOn('trail shoes')).toEqual(['a.com']);

      await track(['a.com', 'b.com'], 'run-2');
      const changed = await buildModels(wh, models);
      for (const name of ['rank_history', 'domain_visibility_daily']) {
        expect(changed.find((b) => b.name === name)).toMatchObject({
          status: 'built',
          mode: 'full',
          message: 'rebuilt in full: int_serp__tracked_domains changed since the last build',
        });
      }
      expect((await flags('trail shoes')).filter((r) => r.domain === 'b.com').map((r) => r.is_tracked)).toEqual([true, true, true]);
      const flagged = await wh.all(`select * from rank_history order by all`);
      await buildModels(wh, models, { fullRefresh: true });
      expect(await wh.all(`select * from rank_history order by all`)).toEqual(flagged);

      // Re-recording the same list (a later run) changes nothing the models read.
      await track(['b.com', 'a.com'], 'run-3');
      const again = await buildModels(wh, models);
      expect(again.find((b) => b.name === 'rank_history')).toMatchObject({ mode: 'incremental' });
      expect(again.find((b) => b.name === 'rank_history')!.message).toBeUndefined();
    });

    it('rebuilds in full when the model SQL changed or the warehouse has no record of the last build', async () => {
      await insertPages(wh, RANK_DAYS_1_2);
      await buildModels(wh, models);
      const edited = models.map((m) => (m.name === 'rank_history' ? { ...m, sql: `${m.sql}\n-- a new version of the model` } : m));
      const afterEdit = await buildModels(wh, edited);
      expect(afterEdit.find((b) => b.name === 'rank_history')).toMatchObject({
        mode: 'full',
        message: 'rebuilt in full: its SQL changed since the last build',
      });
      expect(afterEdit.find((b) => b.name === 'domain_visibility_daily')).toMatchObject({ mode: 'incremental' });
      await wh.run(`delete from model_state`);
      const unknown = await buildModels(wh, edited);
      expect(unknown.find((b) => b.name === 'rank_history')).toMatchObject({
        mode: 'full',
        message: 'rebuilt in full: no record of its last build',
      });
      expect((await buildModels(wh, edited)).find((b) => b.name === 'rank_history')).toMatchObject({ mode: 'incremental' });
    });
  });
});

// The same rows worked out the plain way (self-joins of each check with the series' previous
// one), to hold the model's one-window formulation to: ranks, changes, new and lost flags,
// first and last seen dates, on a churning history with failed checks.
const REFERENCE = `
  with checks as (
      select *, lag(check_date) over (partition by keyword, location_code, language_code, device, engine order by check_date) as prev_date
      from int_serp__daily_checks
  ),
  ranked as (
      select c.keyword, c.location_code, c.language_code, c.device, c.engine, c.check_date, c.prev_date, p.domain, p.rank_absolute
      from checks as c join int_serp__domain_placements as p using (task_id, result_index)
  ),
  rows as (
      select cur.keyword, cur.domain, cur.check_date, cur.rank_absolute, prev.rank_absolute as previous_rank_absolute,
             prev.domain is null as is_new, false as is_lost, cur.check_date as last_seen_date
      from ranked as cur
      left join ranked as prev
        on prev.keyword = cur.keyword and prev.location_code = cur.location_code and prev.language_code = cur.language_code
       and prev.device = cur.device and prev.engine = cur.engine and prev.domain = cur.domain and prev.check_date = cur.prev_date
      union all
      select c.keyword, prev.domain, c.check_date, null, prev.rank_absolute, false, true, prev.check_date
      from checks as c
      join ranked as prev
        on prev.keyword = c.keyword and prev.location_code = c.location_code and prev.language_code = c.language_code
       and prev.device = c.device and prev.engine = c.engine and prev.check_date = c.prev_date
      where not exists (select 1 from ranked as cur where cur.keyword = c.keyword and cur.location_code = c.location_code
        and cur.language_code = c.language_code and cur.device = c.device and cur.engine = c.engine
        and cur.check_date = c.check_date and cur.domain = prev.domain)
  )
  select r.*, f.first_seen_date
  from rows as r
  join (select keyword, domain, min(check_date) as first_seen_date from ranked group by all) as f using (keyword, domain)`;
const MODEL_ROWS = `select keyword, domain, check_date, rank_absolute, previous_rank_absolute, is_new, is_lost, last_seen_date, first_seen_date from rank_history`;

describe('rank_history on a churning synthetic history', () => {
  // As shipped, a history this small is built in one pass (slices.above); forced into four passes
  // (each over a quarter of the keywords' series), the rows must be the same.
  for (const passes of [1, 4]) {
    it(`matches the plain self-join reference after a full build and after incremental builds across gaps and failed checks (${passes} pass${passes > 1 ? 'es' : ''})`, async () => {
      const tmp = await tempDir('pipeline-models-rank-synthetic-');
      const wh = await Warehouse.open(tmp.dir);
      try {
        const models = await discoverModels(DEFAULT_SQL_DIR);
        const rank = models.find((m) => m.name === 'rank_history')!;
        if (passes > 1) rank.sidecar.slices = { count: passes };
        const only = withUpstream(models, ['rank_history', 'domain_visibility_daily']);
        const shape = { keywords: 12, days: 24, depth: 15, domains: 40 };
        // A failed check has no result and no items (only new days fail: an incremental build
        // does not look back at days it built).
        const failSome = (fromDay: number) =>
          wh.run(`delete from serp_results where check_date >= date '2025-01-01' + ${fromDay} and hash(task_id) % 6 = 0;
                delete from serp_items where task_id not in (select task_id from serp_results)`);
        await writeSyntheticHistory(wh, shape);
        await failSome(0);
        const diff = async () => {
          const [d] = await wh.all<{ extra: number; missing: number; n: number; lost: number; returning: number }>(
            `select (select count(*)::int from ((${MODEL_ROWS}) except all (${REFERENCE}))) as extra,
                  (select count(*)::int from ((${REFERENCE}) except all (${MODEL_ROWS}))) as missing,
                  (select count(*)::int from rank_history) as n,
                  (select count(*)::int from rank_history where is_lost) as lost,
                  (select count(*)::int from rank_history where is_new and first_seen_date < check_date) as returning`,
          );
          return d!;
        };
        expect((await buildModels(wh, models, { only })).filter((b) => b.status !== 'built')).toEqual([]);
        const full = await diff();
        expect(full).toMatchObject({ extra: 0, missing: 0 });
        // The history has drop-outs and returns, not only steady ranks.
        expect(full.lost).toBeGreaterThan(0);
        expect(full.returning).toBeGreaterThan(0);
        // New days after a gap of days, one at a time and several at once, with failed checks.
        for (const [offset, days] of [
          [26, 1],
          [27, 3],
          [33, 1],
        ] as const) {
          await writeSyntheticHistory(wh, { ...shape, days }, offset);
          await failSome(offset);
          const builds = await buildModels(wh, models, { only });
          expect(builds.find((b) => b.name === 'rank_history')).toMatchObject({ status: 'built', mode: 'incremental' });
          expect(builds.find((b) => b.name === 'rank_history')!.passes ?? 1).toBe(passes);
          expect(await diff()).toMatchObject({ extra: 0, missing: 0 });
        }
        const incremental = await wh.all(`select * from rank_history order by all`);
        await buildModels(wh, models, { only, fullRefresh: true });
        expect(await wh.all(`select * from rank_history order by all`)).toEqual(incremental);
      } finally {
        wh.close();
        await tmp.cleanup();
      }
    });
  }
});
