import { sqlString } from './columns.js';
import type { Warehouse } from './warehouse.js';

/**
 * The named reads behind `depth: auto` (src/plan/auto-depth.ts): each series' checks before
 * tonight's run, from the models (int_serp__daily_checks, rank_history, stg_pipeline__tasks),
 * and the tracked domains a run's SERP tasks ranked, from the loaded items.
 */

/** One series' last check before a run, and one tracked domain ranked there (domain null: none). */
export interface SeriesCheckRow {
  keyword: string;
  location_code: number;
  language_code: string;
  device: string;
  engine: string;
  last_date: string;
  deepest: number;
  domain: string | null;
  rank: number | null;
}

/** A tracked domain's best rank in one task's result. */
export interface TaskRankRow {
  task_id: string;
  domain: string;
  rank: number;
}

/** `'a','b'`: the items of an IN list. */
const inList = (xs: readonly string[]) => xs.map(sqlString).join(',');

const MODELS = ['int_serp__daily_checks', 'rank_history', 'stg_pipeline__tasks'];

/**
 * Each series' last successful check and the deepest any check looked, the run `$1`'s own
 * checks left out (a resumed run chooses as it did at its start), with the listed domains
 * ranked on that last check.
 */
function seriesChecksSql(domains: readonly string[]): string {
  return `with
    own as (select task_id from stg_pipeline__tasks where run_id = $1 and task_id is not null),
    checks as (
        select d.* from int_serp__daily_checks as d
        where not exists (select 1 from own where own.task_id = d.task_id)
    ),
    series as (
        select keyword, location_code, language_code, device, engine,
               max(check_date) as last_date,
               max(coalesce(depth, 0))::integer as deepest,
               arg_max(task_id, check_date) as last_task_id,
        from checks
        group by all
    )
    select s.keyword, s.location_code, s.language_code, s.device, s.engine,
           strftime(s.last_date, '%Y-%m-%d') as last_date, s.deepest,
           h.domain, h.rank_absolute as rank,
    from series as s
    left join rank_history as h
        on h.task_id = s.last_task_id and h.check_date = s.last_date and not h.is_lost
        and h.domain in (${inList(domains)})
    order by s.keyword, s.location_code, s.language_code, s.device, s.engine, h.domain`;
}

/** The best non-paid rank of each listed domain (lower case, without `www.`) in each task's result. */
function taskRanksSql(taskIds: readonly string[], domains: readonly string[]): string {
  return `select task_id, regexp_replace(lower(domain), '^www\\.', '') as domain, min(rank_absolute)::integer as rank
    from serp_items
    where task_id in (${inList(taskIds)}) and type <> 'paid' and rank_absolute is not null
      and regexp_replace(lower(domain), '^www\\.', '') in (${inList(domains)})
    group by all`;
}

export const depthReads = {
  /** {@link seriesChecksSql}; empty while the models were never built. */
  async seriesChecks(wh: Warehouse, runId: string, domains: readonly string[]): Promise<SeriesCheckRow[]> {
    if (domains.length === 0) return [];
    const have = await wh.all<{ name: string }>(
      `select table_name as name from information_schema.tables where table_name in (${inList(MODELS)})`,
    );
    if (new Set(have.map((r) => r.name)).size < MODELS.length) return [];
    const rows = await wh.all<SeriesCheckRow>(seriesChecksSql(domains), [runId]);
    return rows.map((r) => ({ ...r, location_code: Number(r.location_code), deepest: Number(r.deepest), rank: r.rank === null ? null : Number(r.rank) }));
  },

  /** {@link taskRanksSql}. */
  async taskRanks(wh: Warehouse, taskIds: readonly string[], domains: readonly string[]): Promise<TaskRankRow[]> {
    if (taskIds.length === 0 || domains.length === 0) return [];
    const rows = await wh.all<TaskRankRow>(taskRanksSql(taskIds, domains));
    return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
  },
};
