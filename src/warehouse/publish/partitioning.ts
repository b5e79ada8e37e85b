import { ident } from '../columns.js';

/** Partition of rows that carry no date where their table has one (a null check date). */
export const UNDATED_PART = '1970-01-01';

/**
 * How a table's rows map to `date=` partitions: the row's date as SQL over the alias `t`,
 * and a filter for one partition written on the source columns, so DuckDB's zone maps
 * skip the row groups of other days (a year-long table is not scanned to publish a day).
 */
export interface Partitioning {
  expr: string;
  /** The table's columns `expr` reads (none for a constant partition). */
  columns: readonly string[];
  where(part: string): string;
  /** Filter for the partitions from `part` on. */
  since(part: string): string;
}

function lit(part: string): string {
  return `DATE '${part.replaceAll("'", "''")}'`;
}

/**
 * The data's own date: the declared partition column (check date of SERP rows, call time
 * of the ledger), else `year` and `month` columns (volumes by month), else none (the
 * caller files such tables under the run date).
 */
export function partitioningOf(t: { partitionBy?: string | undefined; columns: readonly string[] }): Partitioning | undefined {
  if (t.partitionBy) {
    const col = `t.${ident(t.partitionBy)}`;
    return {
      columns: [t.partitionBy],
      expr: `coalesce(CAST(${col} AS DATE), ${lit(UNDATED_PART)})`,
      where: (p) => (p === UNDATED_PART ? `${col} IS NULL` : `${col} >= ${lit(p)} AND ${col} < ${lit(p)} + INTERVAL 1 DAY`),
      since: (p) => `${col} >= ${lit(p)}`,
    };
  }
  if (t.columns.includes('year') && t.columns.includes('month')) {
    return {
      columns: ['year', 'month'],
      expr: `coalesce(make_date(t."year", t."month", 1), ${lit(UNDATED_PART)})`,
      where: (p) => (p === UNDATED_PART ? `(t."year" IS NULL OR t."month" IS NULL)` : `t."year" = year(${lit(p)}) AND t."month" = month(${lit(p)})`),
      since: (p) => `t."year" >= year(${lit(p)}) AND make_date(t."year", t."month", 1) >= ${lit(p)}`,
    };
  }
  return undefined;
}

/** A constant partition: a table with no date of its own is filed under one day. */
export function constantPartitioning(day: string): Partitioning {
  return { expr: lit(day), columns: [], where: () => 'true', since: () => 'true' };
}

/** `run_jobs` has no date: its rows go under their run's start day. */
export function runDatePartitioning(): Partitioning {
  const expr = `coalesce((SELECT CAST(r.started_at AS DATE) FROM runs AS r WHERE r.run_id = t.run_id), ${lit(UNDATED_PART)})`;
  return { expr, columns: ['run_id'], where: (p) => `${expr} = ${lit(p)}`, since: (p) => `${expr} >= ${lit(p)}` };
}

export { lit as dateLiteral };
