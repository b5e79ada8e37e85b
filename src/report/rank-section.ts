import { listRelations } from '../models/index.js';
import type { RankSection, RankSeries } from './payload.js';
import type { ReportContext } from './report-context.js';

interface LineRow {
  keyword: string;
  location_code: number;
  market: string;
  pipelines: string[];
  domain: string;
  tracked: boolean;
  dates: string[];
  ranks: (number | null)[];
}

/**
 * Rank lines from `rank_history`: for the `topKeywords` keywords with the most search
 * volume, each market's tracked domains and its `competitors` closest competitors over the
 * last `days` check dates. A closest competitor is an untracked domain whose mean rank on
 * that keyword is nearest the best tracked domain's (the best-ranked ones when no tracked
 * domain ranks). Also records, for every keyword, which of the report's domains ranked
 * for it, so the page's domain filter works on every chart.
 */
export async function rankSection(ctx: ReportContext): Promise<RankSection | null> {
  const rel = await listRelations(ctx.wh);
  if (!rel.has('rank_history')) {
    ctx.notes.push('No rank_history model: run `pipeline models run` after a run with a serp job.');
    return null;
  }
  const { wh } = ctx;
  await createRankWindow(ctx);
  const [counts] = await wh.all<{ keywords: number; markets: number }>(
    `select count(distinct keyword)::int as keywords, count(distinct (language_code, device, engine))::int as markets from report_rank`,
  );
  if (!counts || counts.keywords === 0) {
    ctx.notes.push('rank_history has no rows for the pipelines in scope.');
    return null;
  }
  await createKeywordOrder(ctx, rel.has('search_volume_trends'));
  await createChosenLines(ctx);
  await noteSilentTracked(ctx);

  const dates = (await wh.all<{ d: string }>(`select distinct strftime(check_date, '%Y-%m-%d') as d from report_rank order by d`)).map(
    (r) => r.d,
  );
  const rows = await readLineRows(ctx, counts.markets);
  const series = toSeries(ctx, rows, dates);
  return { dates, keywordsShown: new Set(series.map((s) => s.k)).size, keywordsTotal: counts.keywords, series };
}

/** `report_rank`: the rank_history rows of the pipelines in scope over the last `days` check dates, each marked tracked or not. */
async function createRankWindow(ctx: ReportContext): Promise<void> {
  const { wh, scope } = ctx;
  await wh.run(`create or replace temp table report_rank as
    with scoped as (
      select r.keyword, r.location_code, r.language_code, r.device, r.engine, r.domain, r.check_date, r.rank_absolute, r.is_lost,
             coalesce(tp.pipeline, '(unknown)') as pipeline,
      from rank_history as r
      left join report_task_pipeline as tp using (task_id)
    ),
    in_scope as (
      select * from scoped where ${ctx.inScope('pipeline')}
    ),
    window_dates as (
      select distinct check_date from in_scope order by check_date desc limit ${Math.max(1, Math.floor(scope.days))}
    )
    select s.*, t.domain is not null as tracked,
    from in_scope as s
    left join report_tracked as t
      on t.pipeline = s.pipeline and t.domain = s.domain
    where s.check_date >= (select min(check_date) from window_dates)`);
}

/** `report_rank_keywords`: the window's keywords by search volume (then tracked rows), numbered from 1. */
async function createKeywordOrder(ctx: ReportContext, hasVolume: boolean): Promise<void> {
  const { wh } = ctx;
  const volume = hasVolume
    ? `select keyword, sum(v) as volume from (
         select keyword, location_code, avg(search_volume) as v from search_volume_trends
         where month_start > (select max(month_start) from search_volume_trends) - interval 12 month
         group by all
       ) group by keyword`
    : `select null::varchar as keyword, null::double as volume where false`;
  await wh.run(`create or replace temp table report_rank_keywords as
    with volume as (${volume}),
    per_keyword as (
      select r.keyword, any_value(v.volume) as volume, count(*) filter (where r.tracked and not r.is_lost) as tracked_rows,
      from report_rank as r
      left join volume as v on v.keyword = lower(r.keyword)
      group by r.keyword
    )
    select keyword, row_number() over (order by volume desc nulls last, tracked_rows desc, keyword) as position,
    from per_keyword`);
}

/** `report_rank_lines`: chosen domains per market, the tracked ones that ranked, then the closest competitors. */
async function createChosenLines(ctx: ReportContext): Promise<void> {
  const { wh, scope } = ctx;
  await wh.run(`create or replace temp table report_rank_lines as
    with stats as (
      select keyword, location_code, language_code, device, engine, domain,
             bool_or(tracked) as tracked,
             avg(rank_absolute) filter (where not is_lost) as mean_rank,
      from report_rank
      group by all
      having count(*) filter (where not is_lost) > 0
    ),
    targets as (
      select keyword, location_code, language_code, device, engine, min(mean_rank) filter (where tracked) as target,
      from stats group by all
    ),
    ordered as (
      select s.*, row_number() over (
               partition by s.keyword, s.location_code, s.language_code, s.device, s.engine, s.tracked
               order by abs(s.mean_rank - coalesce(t.target, 0)), s.mean_rank, s.domain) as closeness,
      from stats as s
      inner join targets as t using (keyword, location_code, language_code, device, engine)
    )
    select keyword, location_code, language_code, device, engine, domain, tracked, mean_rank,
    from ordered
    where tracked or closeness <= ${Math.max(0, Math.floor(scope.competitors))}`);
}

/** A note naming the tracked domains that ranked on no keyword in the window. */
async function noteSilentTracked(ctx: ReportContext): Promise<void> {
  const { wh } = ctx;
  const silent = await wh.all<{ domain: string }>(
    `select distinct t.domain from report_tracked as t anti join report_rank as r on r.domain = t.domain and not r.is_lost order by 1`,
  );
  if (silent.length > 0)
    ctx.notes.push(
      `Tracked domain${silent.length > 1 ? 's' : ''} ${silent.map((r) => r.domain).join(', ')} did not rank on any keyword in the window.`,
    );
}

/** The chosen lines of the top keywords, each with its pipelines and its ranks by check date. */
async function readLineRows(ctx: ReportContext, markets: number): Promise<LineRow[]> {
  const { wh, scope } = ctx;
  const marketLabel = markets > 1 ? `language_code || ' · ' || device || ' · ' || engine` : `''`;
  return wh.all<LineRow>(`
    with chosen as (
      select l.* from report_rank_lines as l
      inner join report_rank_keywords as k using (keyword)
      where k.position <= ${Math.max(0, Math.floor(scope.topKeywords))}
    ),
    series_pipelines as (
      select keyword, location_code, language_code, device, engine, list(distinct pipeline order by pipeline) as pipelines,
      from report_rank group by all
    ),
    days as (
      select keyword, location_code, language_code, device, engine, domain,
             list(strftime(check_date, '%Y-%m-%d') order by check_date) as dates,
             list(rank_absolute order by check_date) as ranks,
      from report_rank
      semi join chosen using (keyword, location_code, language_code, device, engine, domain)
      where not is_lost
        and keyword in (select keyword from report_rank_keywords where position <= ${Math.max(0, Math.floor(scope.topKeywords))})
      group by all
    )
    select c.keyword, c.location_code::int as location_code, ${marketLabel} as market, p.pipelines, c.domain, c.tracked,
           d.dates, d.ranks::int[] as ranks,
    from chosen as c
    inner join days as d using (keyword, location_code, language_code, device, engine, domain)
    inner join series_pipelines as p using (keyword, location_code, language_code, device, engine)
    inner join report_rank_keywords as k using (keyword)
    order by k.position, c.location_code, market, c.tracked desc, c.mean_rank, c.domain`);
}

/** The rows as the page's series: one per keyword and market, a line per domain, ranks placed on the window's dates. */
function toSeries(ctx: ReportContext, rows: readonly LineRow[], dates: readonly string[]): RankSeries[] {
  const dateIndex = new Map(dates.map((d, i) => [d, i]));
  const series: RankSeries[] = [];
  const byKey = new Map<string, RankSeries>();
  for (const r of rows) {
    const key = `${r.keyword}\u0000${r.location_code}\u0000${r.market}`;
    let s = byKey.get(key);
    if (!s) {
      const l = ctx.location(r.location_code);
      const p = r.pipelines.map((name) => ctx.pipeline(name));
      s = { k: ctx.keyword(r.keyword, { pipelines: p, location: l }), l, m: r.market, p, lines: [] };
      byKey.set(key, s);
      series.push(s);
    }
    const ranks: (number | null)[] = dates.map(() => null);
    r.dates.forEach((d, i) => (ranks[dateIndex.get(d)!] = r.ranks[i] ?? null));
    s.lines.push([ctx.domains.id(r.domain), r.tracked ? 1 : 0, ranks]);
  }
  return series;
}

/**
 * Registers every keyword of the rank window with its pipelines, locations and which of
 * the report's domains (every domain named so far) ranked for it. Run after the sections
 * that add domains, so the domain filter covers them all.
 */
export async function registerRankKeywords(ctx: ReportContext, rank: RankSection | null): Promise<void> {
  if (!rank) return;
  for (const set of ctx.tracked.values()) for (const d of set) ctx.domains.id(d);
  await ctx.wh.run('create or replace temp table report_domains (domain varchar)');
  for (const d of ctx.domains.values) await ctx.wh.run('insert into report_domains values (?)', [d]);
  const markets = await ctx.wh.all<{ keyword: string; location_code: number; pipelines: string[] }>(`
    select keyword, location_code::int as location_code, list(pipeline) as pipelines,
    from (select distinct keyword, location_code, pipeline from report_rank)
    group by all`);
  for (const r of markets)
    ctx.keyword(r.keyword, { pipelines: r.pipelines.map((p) => ctx.pipeline(p)), location: ctx.location(r.location_code) });
  const ranked = await ctx.wh.all<{ keyword: string; domains: string[] }>(`
    select keyword, list(domain) as domains,
    from (select distinct keyword, domain from report_rank semi join report_domains using (domain) where not is_lost)
    group by all`);
  for (const r of ranked) ctx.keyword(r.keyword, { domains: r.domains.map((d) => ctx.domains.id(d)) });
}
