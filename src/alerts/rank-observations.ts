import { listRelations } from '../models/index.js';
import { runQueries, type Warehouse } from '../warehouse/index.js';
import type { RankObservation } from './rules/index.js';

export type { RankObservation } from './rules/index.js';

/**
 * The rank rows of a run's checks ($1 the pipeline, $2 the time the run started) for the domains its jobs track,
 * with each series' previous check and how deep both checks looked.
 */
const RUN_RANK_ROWS = `with
    run_checks as (
        select task_id, any_value(job) as job,
        from tasks
        where pipeline = $1 and state = 'collected' and task_id is not null
          and collected_at >= $2::TIMESTAMPTZ
        group by task_id
    ),
    tracked as (
        select distinct job, domain from stg_pipeline__tracked_domains where pipeline = $1
    ),
    checked as (
        select h.*, c.job,
        from rank_history as h
        inner join run_checks as c on c.task_id = h.task_id
    ),
    pages as (
        select keyword, location_code, language_code, device, engine, check_date, previous_check_date,
               count(*) filter (where not is_lost) as ranked,
               max(rank_absolute) as deepest,
               any_value(checked_depth) as checked_depth,
               any_value(previous_checked_depth) as previous_checked_depth,
        from checked
        group by all
    ),
    previous_pages as (
        select h.keyword, h.location_code, h.language_code, h.device, h.engine, h.check_date,
               max(h.rank_absolute) as deepest,
        from rank_history as h
        semi join pages as p
            on p.keyword = h.keyword and p.location_code = h.location_code and p.language_code = h.language_code
            and p.device = h.device and p.engine = h.engine and p.previous_check_date = h.check_date
        group by all
    )
    select
        c.keyword, c.location_code, c.language_code, c.device, c.engine, c.domain,
        strftime(c.check_date, '%Y-%m-%d') as check_date,
        strftime(c.previous_check_date, '%Y-%m-%d') as previous_check_date,
        c.days_since_previous_check,
        c.rank_absolute, c.previous_rank_absolute, c.url, prev.url as previous_url,
        nullif(greatest(coalesce(p.checked_depth, 0), coalesce(p.deepest, 0)), 0) as depth,
        nullif(greatest(coalesce(p.previous_checked_depth, 0), coalesce(pp.deepest, 0)), 0) as previous_depth,
        p.ranked::integer as page_ranked,
    from checked as c
    semi join tracked as t on t.job = c.job and t.domain = c.domain
    inner join pages as p
        on p.keyword = c.keyword and p.location_code = c.location_code and p.language_code = c.language_code
        and p.device = c.device and p.engine = c.engine and p.check_date = c.check_date
    left join previous_pages as pp
        on pp.keyword = c.keyword and pp.location_code = c.location_code and pp.language_code = c.language_code
        and pp.device = c.device and pp.engine = c.engine and pp.check_date = c.previous_check_date
    left join rank_history as prev
        on prev.keyword = c.keyword and prev.location_code = c.location_code and prev.language_code = c.language_code
        and prev.device = c.device and prev.engine = c.engine and prev.domain = c.domain
        and prev.check_date = c.previous_check_date and not prev.is_lost
    order by c.check_date, c.keyword, c.location_code, c.language_code, c.device, c.engine, c.domain`;

/**
 * Reads the rank rows of the checks a run collected for its pipeline, for the domains that
 * pipeline's jobs track. A check belongs to the run when its task was collected since the
 * run started (a resumed run's first attempt and the runs it settled included); a failed or
 * uncollected task has no row in `rank_history`, so it can never read as lost.
 * Empty when the models are not built yet.
 */
export async function readRankObservations(wh: Warehouse, o: { pipeline: string; runId: string }): Promise<RankObservation[]> {
  const rel = await listRelations(wh);
  if (!rel.has('rank_history') || !rel.has('stg_pipeline__tracked_domains')) return [];
  const rows = await wh.all<Record<string, unknown>>(RUN_RANK_ROWS, [
    o.pipeline,
    (await runQueries.runStartedAt(wh, o.runId))?.toISOString() ?? null,
  ]);
  return rows.map(toObservation);
}

function toObservation(r: Record<string, unknown>): RankObservation {
  return {
    keyword: String(r.keyword),
    locationCode: Number(r.location_code),
    languageCode: String(r.language_code),
    device: String(r.device),
    engine: String(r.engine),
    domain: String(r.domain),
    checkDate: String(r.check_date),
    previousCheckDate: (r.previous_check_date as string | null) ?? null,
    daysSincePrevious: num(r.days_since_previous_check),
    rank: num(r.rank_absolute),
    previousRank: num(r.previous_rank_absolute),
    url: (r.url as string | null) ?? null,
    previousUrl: (r.previous_url as string | null) ?? null,
    depth: num(r.depth),
    previousDepth: num(r.previous_depth),
    pageRanked: Number(r.page_ranked ?? 0),
  };
}

function num(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}
