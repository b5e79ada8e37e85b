import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { ServiceClient } from '../../src/client/index.js';
import { buildModels, discoverModels, DEFAULT_SQL_DIR, testModels, withUpstream, type Model } from '../../src/models/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { loadLanded, RawLanding, Warehouse } from '../../src/warehouse/index.js';
import { compactFixture, land, response } from '../unit/warehouse/helpers.js';
import { mixedSourcesFixture, SKI_SHAPE, volumeFixture, type LabsMonthRow, type MonthlyRow } from '../fixtures/models/volume-series.js';
import { tempDir } from './helpers.js';

async function loadMonthly(wh: Warehouse, rows: readonly MonthlyRow[] = volumeFixture()): Promise<void> {
  // The loader's layout: a row per keyword in search_volume and its months in the child
  // table, keyed by (task_id, result_index). One task per keyword and location here.
  await wh.run(`delete from search_volume`);
  await wh.run(`delete from search_volume_monthly`);
  const parents = new Map<string, number>();
  for (const r of rows) {
    const task = `${r.keyword}|${r.location_code}|${r.language_code}`;
    if (!parents.has(task)) {
      parents.set(task, 0);
      await wh.run(`insert into search_volume (task_id, result_index, keyword, location_code, language_code) values (?, 0, ?, ?, ?)`, [
        task,
        r.keyword,
        r.location_code,
        r.language_code,
      ]);
    }
    const month = parents.get(task)!;
    parents.set(task, month + 1);
    await wh.run(
      `insert into search_volume_monthly (task_id, result_index, month_index, keyword, year, month, search_volume) values (?, 0, ?, ?, ?, ?, ?)`,
      [task, month, r.keyword, r.year, r.month, r.search_volume],
    );
  }
}

async function loadLabs(wh: Warehouse, rows: readonly LabsMonthRow[]): Promise<void> {
  // The loader's layout: a result row (target or seed), an item row with keyword_data's
  // location, and the item's months in the child table. One task, result and item per month here.
  for (const [i, r] of rows.entries()) {
    const task = `labs-${i}`;
    const [results, items, monthly] =
      r.source === 'ranked'
        ? ['labs_ranked_keywords_targets', 'labs_ranked_keywords', 'labs_ranked_keywords_monthly']
        : ['labs_related_keywords_seeds', 'labs_related_keywords', 'labs_related_keywords_monthly'];
    await wh.run(`insert into ${results} (task_id, result_index, location_code, language_code) values (?, 0, ?, 'en')`, [
      task,
      r.result_location_code,
    ]);
    await wh.run(
      `insert into ${items} (task_id, result_index, item_index, keyword, location_code, language_code) values (?, 0, 0, ?, ?, ?)`,
      [task, r.keyword, r.location_code, r.location_code === null ? null : 'en'],
    );
    await wh.run(
      `insert into ${monthly} (task_id, result_index, item_index, month_index, keyword, year, month, search_volume) values (?, 0, 0, 0, ?, ?, ?, ?)`,
      [task, r.keyword, r.year, r.month, r.search_volume],
    );
  }
}

const TRENDS = `
  select month_start::varchar as month, search_volume as v, source, mom_change as mom, round(mom_change_ratio, 6) as mom_pct, round(mom_pct, 6) as old_mom_pct,
         round(yoy_change_ratio, 6) as yoy_ratio, round(yoy_pct, 6) as old_yoy_pct, yoy_change as yoy,
         avg_3m, round(slope_12m, 6) as slope, round(seasonality_index, 6) as season, peak_month as peak
  from search_volume_trends where keyword = ? order by month_start`;

describe('search_volume_trends on series with known answers', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let wh: Warehouse;
  let models: Model[];
  let only: Set<string>;

  beforeEach(async () => {
    tmp = await tempDir('pipeline-models-volume-');
    wh = await Warehouse.open(tmp.dir);
    models = await discoverModels(DEFAULT_SQL_DIR);
    only = withUpstream(models, ['search_volume_trends']);
  });
  afterEach(async () => {
    wh.close();
    await tmp.cleanup();
  });

  it('is skipped with the reason when search_volume_monthly is not in the warehouse, and the other models still build', async () => {
    // Every warehouse declares the table today; one written by an older version may lack it.
    await wh.run(`drop table search_volume_monthly`);
    const builds = await buildModels(wh, models);
    const by = Object.fromEntries(builds.map((b) => [b.name, b]));
    expect(by.stg_keywords_data__search_volume_monthly).toMatchObject({ status: 'skipped' });
    expect(by.stg_keywords_data__search_volume_monthly!.message).toMatch(/source table search_volume_monthly is not in the warehouse/);
    expect(by.int_keywords__monthly_search_volume).toMatchObject({
      status: 'skipped',
      message: 'upstream model stg_keywords_data__search_volume_monthly was skipped',
    });
    expect(by.search_volume_trends).toMatchObject({
      status: 'skipped',
      message: 'upstream model int_keywords__monthly_search_volume was skipped',
    });
    expect(by.rank_history).toMatchObject({ status: 'built' });
  });

  it('finds the peak month and seasonality of a seasonal series, and its year-on-year change', async () => {
    await loadMonthly(wh);
    const builds = await buildModels(wh, models, { only });
    expect(builds.every((b) => b.status === 'built')).toBe(true);
    const rows = await wh.all<Record<string, unknown>>(TRENDS, ['ski boots']);
    expect(rows).toHaveLength(24);
    const means = SKI_SHAPE.map((v) => v + 50);
    const overall = means.reduce((a, b) => a + b, 0) / 12;
    const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
    expect(rows.every((r) => r.peak === 12)).toBe(true);
    expect(rows[11]).toMatchObject({ month: '2024-12-01', v: 1200n, mom: 300n, yoy: null, season: r6(1250 / overall) });
    expect(rows[12]).toMatchObject({ month: '2025-01-01', v: 1000n, mom: -200n, yoy: 100n, season: r6(950 / overall) });
    expect(rows[17]).toMatchObject({ month: '2025-06-01', v: 200n, yoy: 100n, mom_pct: r6(-100 / 300), yoy_ratio: r6(100 / 100) });
    // the deprecated _pct columns hold the same fractions as the _change_ratio ones
    expect(rows.every((r) => r.old_mom_pct === r.mom_pct && r.old_yoy_pct === r.yoy_ratio)).toBe(true);
    expect(rows[0]).toMatchObject({ mom: null, avg_3m: null, slope: null });
    expect(rows[2]!.avg_3m).toBeCloseTo((900 + 700 + 500) / 3, 9);
  });

  it('gives the exact slope of a linear series and its 3-month mean', async () => {
    await loadMonthly(wh);
    await buildModels(wh, models, { only });
    const rows = await wh.all<Record<string, unknown>>(TRENDS, ['linear']);
    expect(rows.map((r) => r.slope)).toEqual([null, null, null, null, null, 10, 10, 10, 10, 10, 10, 10]);
    expect(rows.map((r) => r.mom)).toEqual([null, ...Array(11).fill(10n)]);
    expect(rows[3]!.avg_3m).toBe(120);
  });

  it('leaves a month with no data out and compares by calendar month, never across the gap', async () => {
    await loadMonthly(wh);
    await buildModels(wh, models, { only });
    const rows = await wh.all<Record<string, unknown>>(TRENDS, ['gappy']);
    expect(rows.map((r) => [r.month, r.v, r.mom, r.avg_3m])).toEqual([
      ['2025-01-01', 100n, null, null],
      ['2025-02-01', 200n, 100n, null],
      ['2025-04-01', 400n, null, null],
      ['2025-05-01', 500n, 100n, null],
    ]);
    const [two] = await wh.all<{ v: bigint; n: bigint }>(
      `select max(search_volume) as v, count(*) as n from search_volume_trends where keyword = 'two rows'`,
    );
    expect(two).toEqual({ v: 120n, n: 1n });
    const failing = (
      await testModels(
        wh,
        models.filter((m) => only.has(m.name)),
      )
    ).filter((t) => t.status !== 'passed');
    expect(failing).toEqual([]);
  });
  it('merges labs keyword info: keywords-data wins a month both have, a month only labs has fills the series', async () => {
    const { keywordsData, labs } = mixedSourcesFixture();
    await loadMonthly(wh, keywordsData);
    await loadLabs(wh, labs);
    const builds = await buildModels(wh, models, { only });
    expect(builds.filter((b) => b.status !== 'built')).toEqual([]);
    const rows = await wh.all<Record<string, unknown>>(TRENDS.replace('where keyword = ?', 'where keyword = ? and location_code = 2840'), [
      'mixed',
    ]);
    expect(rows.map((r) => [r.month, r.v, r.source, r.mom, r.avg_3m, r.slope, r.peak])).toEqual([
      ['2025-01-01', 100n, 'keywords_data', null, null, null, 8],
      ['2025-02-01', 200n, 'keywords_data', 100n, null, null, 8],
      ['2025-03-01', 300n, 'keywords_data', 100n, 200, null, 8],
      ['2025-04-01', 400n, 'keywords_data', 100n, 300, null, 8],
      ['2025-05-01', 500n, 'keywords_data', 100n, 400, null, 8],
      ['2025-06-01', 600n, 'keywords_data', 100n, 500, 100, 8],
      ['2025-07-01', 700n, 'labs', 100n, 600, 100, 8],
      ['2025-08-01', 800n, 'labs', 100n, 700, 100, 8],
    ]);
    // Each calendar month has one value: 100..800, mean 450.
    expect(rows.map((r) => r.season)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((m) => Math.round(((100 * m) / 450) * 1e6) / 1e6));
    // Location 2826 only has a labs month: a series of its own.
    const [uk] = await wh.all<Record<string, unknown>>(
      `select month_start::varchar as month, search_volume as v, source, mom_change as mom from search_volume_trends where keyword = 'mixed' and location_code = 2826`,
    );
    expect(uk).toEqual({ month: '2025-07-01', v: 5n, source: 'labs', mom: null });
    // Both sources stay side by side in the intermediate model.
    const both = await wh.all(
      `select month_start::varchar as month, source, search_volume as v from int_keywords__monthly_search_volume where keyword = 'mixed' and location_code = 2840 and month_start between '2025-05-01' and '2025-07-01' order by month, source`,
    );
    expect(both).toEqual([
      { month: '2025-05-01', source: 'keywords_data', v: 500n },
      { month: '2025-05-01', source: 'labs', v: 9999n },
      { month: '2025-06-01', source: 'keywords_data', v: 600n },
      { month: '2025-06-01', source: 'labs', v: 1n },
      { month: '2025-07-01', source: 'labs', v: 700n },
    ]);
    const failing = (
      await testModels(
        wh,
        models.filter((m) => only.has(m.name)),
      )
    ).filter((t) => t.status !== 'passed');
    expect(failing).toEqual([]);
  });
  it("reads the loader's own layout: keywords-data and labs bodies landed and loaded, then modelled", async () => {
    const bodies = [
      response('/v3/keywords_data/engA_ads/search_volume/live', await compactFixture('keywords_data.search_volume.live.mixed.json')),
      response('/v3/svc_labs/engA/ranked_keywords/live', await compactFixture('svc_labs.ranked_keywords.live.basic.json')),
      response('/v3/svc_labs/engA/related_keywords/live', await compactFixture('svc_labs.related_keywords.live.basic.json')),
    ];
    const report = await loadLanded(wh, { callIds: await land(wh, ...bodies) });
    expect(report.rows.get('labs_ranked_keywords_monthly')).toBe(2);
    await buildModels(wh, models, { only });
    const rows =
      await wh.all(`select keyword, location_code as loc, month_start::varchar as month, search_volume as v, source, mom_change as mom
                               from search_volume_trends where keyword in ('trail shoes', 'trail running shoes') order by keyword, month`);
    // trail running shoes: 2026-09 from ranked (40500; related has null), 2026-10 from both (49500).
    expect(rows).toEqual([
      { keyword: 'trail running shoes', loc: 2840, month: '2026-09-01', v: 40500n, source: 'labs', mom: null },
      { keyword: 'trail running shoes', loc: 2840, month: '2026-10-01', v: 49500n, source: 'labs', mom: 9000n },
      { keyword: 'trail shoes', loc: 2840, month: '2026-09-01', v: 66000n, source: 'keywords_data', mom: null },
      { keyword: 'trail shoes', loc: 2840, month: '2026-10-01', v: 81000n, source: 'keywords_data', mom: 15000n },
    ]);
  });
  it('labs bodies of the emulator (ranked and related keywords, called through the client) flow into the trends', async () => {
    const sandbox = await startSandbox({ seed: 3 });
    try {
      const landing = new RawLanding(wh, { runId: 'labs-run', pipeline: 'labs' });
      const calls: string[] = [];
      const client = new ServiceClient({
        baseUrl: sandbox.url,
        apiKey: 'svc_live_testlabs',
        land: async (r) => {
          calls.push(r.callId);
          await landing.land(r);
        },
      });
      await client.call(endpoint('svc_labs.engA.ranked_keywords.live'), {
        tasks: [{ target: 'nike.com', location_code: 2840, language_code: 'en', limit: 20 }],
      });
      await client.call(endpoint('svc_labs.engA.related_keywords.live'), {
        tasks: [{ keyword: 'running shoes', location_code: 2840, language_code: 'en' }],
      });
      await loadLanded(wh, { callIds: calls });
    } finally {
      await sandbox.close();
    }
    const builds = await buildModels(wh, models, { only });
    expect(builds.filter((b) => b.status !== 'built')).toEqual([]);
    // Every month the labs items carry (with a volume) is one row of the mart, from labs.
    const [got] = await wh.all<{ months: number; trends: number; other: number }>(`
      select (select count(*)::int from (select distinct lower(keyword), location_code, year, month from stg_labs__ranked_keywords_monthly where search_volume is not null
                                         union select distinct lower(keyword), location_code, year, month from stg_labs__related_keywords_monthly where search_volume is not null)) as months,
             (select count(*)::int from search_volume_trends) as trends,
             (select count(*)::int from search_volume_trends where source <> 'labs') as other`);
    expect(got!.months).toBeGreaterThan(24);
    expect(got).toEqual({ months: got!.months, trends: got!.months, other: 0 });
    const failing = (
      await testModels(
        wh,
        models.filter((m) => only.has(m.name)),
      )
    ).filter((t) => t.status !== 'passed');
    expect(failing).toEqual([]);
  });
});
