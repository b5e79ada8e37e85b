import { listRelations } from '../models/index.js';
import type { VolumeSection } from './payload.js';
import { round, type ReportContext } from './report-context.js';

/** Months of search volume the report keeps: two years show a season twice. */
export const VOLUME_MONTHS = 24;

/**
 * Monthly search volume per keyword and location from `search_volume_trends` (the last
 * 24 months), with the model's peak month, 12-month slope and year-on-year change of the
 * latest month. The page sums and compares the keywords its filters keep, and derives
 * the seasonality of that set from the monthly volumes.
 */
export async function volumeSection(ctx: ReportContext): Promise<VolumeSection | null> {
  const rel = await listRelations(ctx.wh);
  if (!rel.has('search_volume_trends')) {
    ctx.notes.push('No search_volume_trends model: add a search_volume job, run it, then `pipeline models run`.');
    return null;
  }
  const rows = await ctx.wh.all<{
    keyword: string;
    location_code: number;
    pipelines: string[];
    months: string[];
    volumes: number[];
    peak_month: number;
    slope_12m: number | null;
    yoy_pct: number | null;
  }>(`
    with sources as (
      select lower(sv.keyword) as keyword, sv.location_code::int as location_code, coalesce(tp.pipeline, '(unknown)') as pipeline,
      from search_volume as sv
      left join report_task_pipeline as tp using (task_id)
    ),
    keyword_pipelines as (
      select keyword, location_code, list(distinct pipeline order by pipeline) as pipelines,
      from sources
      where ${ctx.inScope('pipeline')}
      group by all
    ),
    recent as (
      select * from search_volume_trends
      where month_start > (select max(month_start) from search_volume_trends) - interval ${VOLUME_MONTHS} month
    )
    select t.keyword, t.location_code::int as location_code, ${ctx.scope.pipelines?.length ? 'p.pipelines' : "coalesce(p.pipelines, ['(unknown)'])"} as pipelines,
           list(strftime(t.month_start, '%Y-%m') order by t.month_start) as months,
           list(t.search_volume::double order by t.month_start) as volumes,
           arg_max(t.peak_month, t.month_start)::int as peak_month,
           arg_max(t.slope_12m, t.month_start)::double as slope_12m,
           arg_max(t.yoy_pct, t.month_start)::double as yoy_pct,
    from recent as t
    ${ctx.scope.pipelines?.length ? 'inner' : 'left'} join keyword_pipelines as p
      on p.keyword = t.keyword and p.location_code = t.location_code
    group by t.keyword, t.location_code, p.pipelines
    order by sum(t.search_volume) desc, t.keyword, t.location_code`);
  if (rows.length === 0) {
    ctx.notes.push('search_volume_trends has no rows for the pipelines in scope.');
    return null;
  }
  const months = [...new Set(rows.flatMap((r) => r.months))].sort();
  const monthIndex = new Map(months.map((m, i) => [m, i]));
  const series: VolumeSection['series'] = rows.map((r) => {
    const l = ctx.location(r.location_code);
    const k = ctx.keyword(r.keyword, { pipelines: r.pipelines.map((p) => ctx.pipeline(p)), location: l });
    const values: (number | null)[] = months.map(() => null);
    r.months.forEach((m, i) => (values[monthIndex.get(m)!] = r.volumes[i] ?? null));
    return [
      k,
      l,
      values,
      r.peak_month,
      r.slope_12m === null ? null : round(r.slope_12m, 1),
      r.yoy_pct === null ? null : round(r.yoy_pct, 3),
    ];
  });
  return { months, series };
}
