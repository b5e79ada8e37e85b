import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';

// The comparison SQL of bench/depth.ts: two warehouses that ran the same nights on the same
// emulator (an adaptive arm and a fixed-depth arm), attached read-only side by side.

const SERIES = 'keyword, location_code, language_code, device, engine, domain';

/** `x` and `y` are rows of the same series and domain. */
const sameSeries = (x: string, y: string) =>
  SERIES.split(', ')
    .map((col) => `${x}.${col} = ${y}.${col}`)
    .join(' and ');

/** What one arm bought: CNY from its ledger (net of refunds), tasks by depth and by the reason recorded for it. */
export interface ArmCost {
  cny: number;
  tasks: number;
  byDepth: { depth: number; tasks: number }[];
  /** Tasks by a `*reason*` column of `tasks` when the warehouse has one (adaptive depth's `auto:*`). */
  byReason: { reason: string; tasks: number }[];
}

/** Tracked ranks depth 100 recorded and the adaptive arm did not, by what the adaptive arm knew the night before. */
export interface Misses {
  /** Tracked (series, domain, night) placements the fixed arm recorded. */
  recorded: number;
  missed: number;
  /** On the first night (no history to go by). */
  firstNight: number;
  /** Seen by the adaptive arm the night before (target 0). */
  seenNightBefore: number;
  /** Not in the top 100 the night before (depth 100's view): a new entry. */
  newEntry: number;
  /** In the top 100 the night before but not seen by the adaptive arm then either. */
  unseenSince: number;
}

/** Entries into the top 100 after the first night (depth 100's view) and when the adaptive arm first saw each. */
export interface Entries {
  entries: number;
  seenSameNight: number;
  /** Nights from entry to the adaptive arm's first sight, for entries seen later while still ranked. */
  nightsToSee: number[];
  /** Left the top 100 again before the adaptive arm saw them. */
  leftUnseen: number;
  /** Still ranked and not yet seen on the last night. */
  unseenAtEnd: number;
}

/** Opens an in-memory DuckDB with each warehouse attached read-only under its alias; closed after `fn`. */
export async function withArms<T>(arms: Record<string, string>, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  try {
    for (const [alias, dir] of Object.entries(arms))
      await c.run(`ATTACH '${join(dir, 'warehouse.duckdb').replaceAll("'", "''")}' AS ${alias} (READ_ONLY)`);
    return await fn(c);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

async function rows<T>(c: DuckDBConnection, sql: string): Promise<T[]> {
  return (await c.runAndReadAll(sql)).getRowObjectsJS() as T[];
}

/** The arm's spend and what it bought. */
export async function armCost(c: DuckDBConnection, arm: string): Promise<ArmCost> {
  const [total] = await rows<{ cny: number; tasks: number }>(
    c,
    `select (select coalesce(sum(charge_cny), 0) from ${arm}.ledger)::double as cny, (select count(*) from ${arm}.tasks)::int as tasks`,
  );
  const byDepth = await rows<{ depth: number; tasks: number }>(
    c,
    `select (spec->>'depth')::int as depth, count(*)::int as tasks from ${arm}.tasks group by all order by depth`,
  );
  const [reason] = await rows<{ name: string }>(
    c,
    `select column_name as name from duckdb_columns() where database_name = '${arm}' and table_name = 'tasks' and column_name like '%reason%' order by column_name limit 1`,
  );
  const byReason = reason
    ? await rows<{ reason: string; tasks: number }>(
        c,
        `select coalesce("${reason.name}"::varchar, '(none)') as reason, count(*)::int as tasks from ${arm}.tasks group by all order by reason`,
      )
    : [];
  return { cny: total!.cny, tasks: total!.tasks, byDepth, byReason };
}

/** Tracked ranks the fixed arm recorded that the adaptive arm did not, classified. */
export async function missedRanks(c: DuckDBConnection, adaptive: string, fixed: string): Promise<Misses> {
  const [m] = await rows<Misses>(
    c,
    `with
    f as (select ${SERIES}, check_date, is_new from ${fixed}.rank_history where is_tracked and not is_lost),
    a as (select ${SERIES}, check_date from ${adaptive}.rank_history where is_tracked and not is_lost),
    first_night as (select min(check_date) as d from f),
    missed as (select * from f anti join a using (${SERIES}, check_date)),
    classified as (
        select
            m.check_date = (select d from first_night) as first_night,
            p.domain is not null as seen_night_before,
            m.is_new,
        from missed as m
        left join a as p
            on ${sameSeries('p', 'm')} and p.check_date = m.check_date - 1
    )
    select
        (select count(*) from f)::int as recorded,
        count(*)::int as missed,
        count(*) filter (where first_night)::int as "firstNight",
        count(*) filter (where not first_night and seen_night_before)::int as "seenNightBefore",
        count(*) filter (where not first_night and not seen_night_before and is_new)::int as "newEntry",
        count(*) filter (where not first_night and not seen_night_before and not is_new)::int as "unseenSince",
    from classified`,
  );
  return m!;
}

/** Each entry into the top 100 (after the first night) and how many nights the adaptive arm took to see it. */
export async function entrySightings(c: DuckDBConnection, adaptive: string, fixed: string): Promise<Entries> {
  const all = await rows<{ entered: string; seen: number | null; left_after: number | null }>(
    c,
    `with
    f as (select ${SERIES}, check_date, is_new, is_lost from ${fixed}.rank_history where is_tracked),
    a as (select ${SERIES}, check_date from ${adaptive}.rank_history where is_tracked and not is_lost),
    entries as (
        select ${SERIES}, check_date as entered from f
        where is_new and check_date > (select min(check_date) from f)
    ),
    timed as (
        select
            e.entered,
            (select min(x.check_date) from a as x where ${sameSeries('x', 'e')} and x.check_date >= e.entered) as seen_on,
            (select min(l.check_date) from f as l where l.is_lost and ${sameSeries('l', 'e')} and l.check_date > e.entered) as left_on,
        from entries as e
    )
    select
        entered::varchar as entered,
        case when left_on is null or seen_on < left_on then date_diff('day', entered, seen_on) end::int as seen,
        date_diff('day', entered, left_on)::int as left_after,
    from timed`,
  );
  const later = all.filter((e) => e.seen !== null && e.seen > 0).map((e) => e.seen!);
  return {
    entries: all.length,
    seenSameNight: all.filter((e) => e.seen === 0).length,
    nightsToSee: later.sort((x, y) => x - y),
    leftUnseen: all.filter((e) => e.seen === null && e.left_after !== null).length,
    unseenAtEnd: all.filter((e) => e.seen === null && e.left_after === null).length,
  };
}

/** How the tracked domains' recorded ranks fall in bands (depth 100's view), over every tracked series and night. */
export async function rankBands(c: DuckDBConnection, fixed: string): Promise<{ band: string; share: number }[]> {
  return rows<{ band: string; share: number }>(
    c,
    `with
    checks as (
        select d.keyword, d.location_code, d.language_code, d.device, d.engine, d.check_date, t.domain,
        from ${fixed}.int_serp__daily_checks as d
        inner join ${fixed}.int_serp__tracked_domains as t using (keyword, location_code, language_code, device, engine)
    ),
    placed as (
        select c.*, r.rank_absolute from checks as c
        left join ${fixed}.rank_history as r using (${SERIES}, check_date)
    ),
    banded as (
        select case
            when rank_absolute <= 10 then '1-10'
            when rank_absolute <= 30 then '11-30'
            when rank_absolute is not null then '31+ (within the 100 results bought)'
            else 'not in the 100 bought'
        end as band,
        from placed
    )
    select band, (count(*) / sum(count(*)) over ())::double as share from banded group by band order by band`,
  );
}
