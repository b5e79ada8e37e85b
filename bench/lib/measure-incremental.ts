import { performance } from 'node:perf_hooks';
import { recordTrackedDomains, type Warehouse } from '../../src/warehouse/index.js';
import { buildModels, withUpstream, type Model } from '../../src/models/index.js';

export interface HistoryShape {
  keywords: number;
  days: number;
  depth: number;
  /** Size of the domain pool the pages draw from. */
  domains?: number;
  /** First check date, `yyyy-mm-dd`. */
  start?: string;
}

/**
 * Writes a synthetic nightly rank history straight into `serp_results` / `serp_items`
 * (one page per keyword and day, `depth` organic items; about one item in twenty changes
 * domain each week), with each check's task in `tasks` and two tracked domains, for
 * the incremental-build benchmark. `dayOffset` appends later days to an existing history.
 */
export async function writeSyntheticHistory(wh: Warehouse, shape: HistoryShape, dayOffset = 0): Promise<void> {
  const start = shape.start ?? '2025-01-01';
  const pool = shape.domains ?? 3000;
  const days = `range(${dayOffset}, ${dayOffset + shape.days})`;
  await wh.run(`insert into serp_results (task_id, result_index, run_id, se, se_type, keyword, location_code, language_code, device, os, checked_at, check_date, items_count)
    select 't' || d || '-' || k, 0, 'bench', 'engA', 'organic', 'keyword ' || k, 2840, 'en', 'desktop', 'windows',
           (date '${start}' + d::integer)::timestamp::timestamptz + interval 9 hour, date '${start}' + d::integer, ${shape.depth}
    from ${days} dd(d), range(${shape.keywords}) kk(k) order by d, k`);
  // Each check's task, of one SERP job that tracks two domains of the pool (is_tracked).
  await wh.run(`insert into tasks (tag, run_id, pipeline, job, endpoint_id, task_id, state)
    select 'tag-' || d || '-' || k, 'bench', 'bench', 'serp-0', 'serp.engA.organic.task_post', 't' || d || '-' || k, 'collected'
    from ${days} dd(d), range(${shape.keywords}) kk(k)`);
  if (dayOffset === 0)
    await recordTrackedDomains(
      wh,
      { name: 'bench', jobs: [{ name: 'serp-0', track_domains: ['site1.com', 'site2.com'] }] },
      'bench',
      new Date(`${start}T00:00:00Z`),
    );
  await wh.run(`insert into serp_items (task_id, result_index, item_index, check_date, type, rank_group, rank_absolute, domain, url)
    select 't' || d || '-' || k, 0, p, date '${start}' + d::integer, 'organic', p + 1, p + 1, dom, 'https://' || dom || '/' || k
    from (
      select d, k, p, 'site' || ((k * 7919 + p * 104729 + (case when hash(k, p, d // 7) % 20 = 0 then d else 0 end)) % ${pool}) || '.com' as dom
      from ${days} dd(d), range(${shape.keywords}) kk(k), range(${shape.depth}) pp(p)
    ) order by d, k, p`);
  // The load ends with its checkpoint, so the model timings below do not pay for it.
  await wh.run('checkpoint');
}

/**
 * Times a full build of `rank_history` and `domain_visibility_daily` (and what they read) against an incremental build
 * after one more day is loaded: the figure `models.incremental_ratio`.
 */
export async function measureIncrementalRatio(
  wh: Warehouse,
  models: readonly Model[],
  shape: HistoryShape,
): Promise<{ fullS: number; incrementalS: number; ratio: number; rows: number }> {
  const only = withUpstream(models, ['rank_history', 'domain_visibility_daily']);
  await writeSyntheticHistory(wh, shape);
  let t0 = performance.now();
  const full = await buildModels(wh, models, { only, fullRefresh: true });
  const fullS = (performance.now() - t0) / 1000;
  const failed = full.find((b) => b.status !== 'built');
  if (failed) throw new Error(`full build failed: ${failed.name}: ${failed.message}`);
  await writeSyntheticHistory(wh, { ...shape, days: 1 }, shape.days);
  t0 = performance.now();
  const inc = await buildModels(wh, models, { only });
  const incrementalS = (performance.now() - t0) / 1000;
  const rh = inc.find((b) => b.name === 'rank_history');
  if (rh?.mode !== 'incremental') throw new Error(`rank_history was not built incrementally: ${JSON.stringify(rh)}`);
  return { fullS, incrementalS, ratio: incrementalS / fullS, rows: full.find((b) => b.name === 'rank_history')?.rows ?? 0 };
}
