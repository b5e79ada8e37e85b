import { listRelations } from '../models/index.js';
import type { VisibilitySection } from './payload.js';
import { round, type ReportContext } from './report-context.js';

/**
 * Visibility per domain and location over the last `days` check dates, from
 * `domain_visibility_daily`: the tracked domains and the `visibilityDomains` others with
 * the most visibility. Each value is visibility % times keywords checked, and the
 * keywords checked are given per location and date, so the page can add locations up
 * and divide (the exact visibility % of the locations chosen). Visibility is a market
 * figure: when the report is limited to some pipelines, it keeps their markets.
 */
export async function visibilitySection(ctx: ReportContext): Promise<VisibilitySection | null> {
  const rel = await listRelations(ctx.wh);
  if (!rel.has('domain_visibility_daily')) {
    ctx.notes.push('No domain_visibility_daily model: run `pipeline models run` after a run with a serp job.');
    return null;
  }
  const { wh, scope } = ctx;
  const markets = scope.pipelines?.length
    ? 'semi join (select distinct location_code, language_code, device, engine from report_rank) as m using (location_code, language_code, device, engine)'
    : '';
  await wh.run(`create or replace temp table report_visibility as
    with scoped as (
      select * from domain_visibility_daily as v ${markets}
    ),
    window_dates as (
      select distinct check_date from scoped order by check_date desc limit ${Math.max(1, Math.floor(scope.days))}
    )
    select * from scoped where check_date >= (select min(check_date) from window_dates)`);
  const dates = (
    await wh.all<{ d: string }>(`select distinct strftime(check_date, '%Y-%m-%d') as d from report_visibility order by d`)
  ).map((r) => r.d);
  if (dates.length === 0) {
    ctx.notes.push('domain_visibility_daily has no rows for the pipelines in scope.');
    return null;
  }
  const dateIndex = new Map(dates.map((d, i) => [d, i]));
  const trackedDomains = [...new Set([...ctx.tracked.values()].flatMap((s) => [...s]))];
  const top = await wh.all<{ domain: string }>(
    `select domain from report_visibility group by domain order by sum(visibility) desc, domain limit ${Math.max(0, Math.floor(scope.visibilityDomains))}`,
  );
  const present = new Set((await wh.all<{ domain: string }>('select distinct domain from report_visibility')).map((r) => r.domain));
  const domains = [...new Set([...trackedDomains.filter((d) => present.has(d)).sort(), ...top.map((r) => r.domain)])];

  const checkedRows = await wh.all<{ location_code: number; d: string; checked: number }>(`
    select location_code::int as location_code, strftime(check_date, '%Y-%m-%d') as d, sum(checked)::int as checked
    from (
      select location_code, check_date, language_code, device, engine, max(keywords_checked) as checked
      from report_visibility group by all
    ) group by all`);
  const checked: number[][] = [];
  for (const r of checkedRows) {
    const l = ctx.location(r.location_code);
    while (checked.length <= l) checked.push(dates.map(() => 0));
    checked[l]![dateIndex.get(r.d)!] = r.checked;
  }
  await wh.run('create or replace temp table report_visibility_domains (domain varchar)');
  for (const d of domains) await wh.run('insert into report_visibility_domains values (?)', [d]);
  const rows = await wh.all<{ domain: string; location_code: number; d: string; weighted: number }>(`
    select domain, location_code::int as location_code, strftime(check_date, '%Y-%m-%d') as d,
           sum(visibility_pct * keywords_checked)::double as weighted
    from report_visibility
    where domain in (select domain from report_visibility_domains)
    group by all
    order by domain, location_code, d`);
  const series = new Map<string, [number, number, number[]]>();
  for (const r of rows) {
    const key = `${r.domain}\u0000${r.location_code}`;
    let s = series.get(key);
    if (!s) {
      s = [ctx.domains.id(r.domain), ctx.location(r.location_code), dates.map(() => 0)];
      series.set(key, s);
    }
    s[2][dateIndex.get(r.d)!] = round(r.weighted, 3);
  }
  const order = new Map(domains.map((d, i) => [d, i]));
  const list = [...series.values()].sort(
    (a, b) => order.get(ctx.domains.values[a[0]]!)! - order.get(ctx.domains.values[b[0]]!)! || a[1] - b[1],
  );
  return { dates, checked, series: list };
}
