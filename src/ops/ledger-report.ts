import { TASK_UNITS_SQL } from '../catalog/index.js';
import type { ServingReader } from '../warehouse/index.js';

/** A warehouse, or its serving catalog (the published ledger), to query. */
type Db = ServingReader;

export type LedgerGrouping = 'day' | 'pipeline' | 'endpoint' | 'run' | 'depth_reason';

export interface LedgerQuery {
  /** Inclusive day in `tz`, `yyyy-mm-dd`. */
  from?: string;
  /** Inclusive day in `tz`, `yyyy-mm-dd`. */
  to?: string;
  /** Group and sum by these keys, in this order (`['day', 'pipeline']`). */
  by?: LedgerGrouping | readonly LedgerGrouping[];
  /** IANA time zone of the days (`date`, `day`, `--from/--to`) and local times; default `UTC`. */
  tz?: string;
}

/**
 * Whether `tz` is an IANA time zone name that `Intl` knows (`Europe/Berlin`, `UTC`): DuckDB's
 * ICU (built into @duckdb/node-api, no download) knows the same names.
 */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** A SQL string literal. The zone is checked with `isTimeZone` first; quoting keeps it text anyway. */
function lit(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

function keys(by: LedgerQuery['by']): LedgerGrouping[] {
  return by === undefined ? [] : typeof by === 'string' ? [by] : [...new Set(by)];
}

/**
 * The ledger with each POST split by the `depth_reason` of the tasks it created (tasks.depth_reason,
 * '' for a fixed depth): one row per call and reason, its charge shared by the tasks' units of
 * depth (TASK_UNITS_SQL) and `tasks` the count of that reason; a refund row takes the reason of
 * the task refunded. A call without task rows keeps its whole charge under ''.
 */
const LEDGER_BY_DEPTH_REASON = `(SELECT l.* REPLACE (
        CAST(l.charge_cny * coalesce(w.share, 1) AS DECIMAL(18,6)) AS charge_cny,
        CAST(l.refund_cny * coalesce(w.share, 1) AS DECIMAL(18,6)) AS refund_cny,
        coalesce(w.n, l.tasks) AS tasks),
      coalesce(w.depth_reason, r.depth_reason) AS depth_reason
    FROM ledger AS l
    LEFT JOIN (SELECT post_call_id AS call_id, depth_reason, count(*)::INT AS n,
                      sum(${TASK_UNITS_SQL}) / sum(sum(${TASK_UNITS_SQL})) OVER (PARTITION BY post_call_id) AS share
               FROM tasks WHERE post_call_id IS NOT NULL GROUP BY 1, 2) AS w
      ON w.call_id = l.call_id AND l.task_id IS NULL
    LEFT JOIN (SELECT task_id, any_value(depth_reason) AS depth_reason FROM tasks WHERE task_id IS NOT NULL GROUP BY 1) AS r
      ON r.task_id = l.task_id)`;

/**
 * The SQL of the ledger report: one row per call or refund, or per group with `by` (net
 * charges: refund rows count negative, and apart in `refund_cny`). Charges are
 * summed as DECIMAL and returned as text so no float touches money; calls whose charge
 * header was missing are counted apart, since they are what a reconciliation looks at.
 * Days (`date`, `day`, `from`/`to`) are calendar days in `tz`; a call's rows carry its time in
 * `tz` and in UTC as `yyyy-mm-dd hh:mm:ss`, which spreadsheets read as a date and time.
 * `typed` (a Parquet file) keeps DuckDB's own types instead: money DECIMAL(18,6), times
 * TIMESTAMP WITH TIME ZONE (UTC), the day a DATE, as the published `parquet/ledger` has them.
 */
export function ledgerSql(q: LedgerQuery, o: { typed?: boolean } = {}): { sql: string; params: (string | null)[] } {
  const tz = q.tz ?? 'UTC';
  const local = `(called_at AT TIME ZONE ${lit(tz)})`;
  const where = `WHERE ($1::VARCHAR IS NULL OR ${local}::DATE >= $1::DATE)
    AND ($2::VARCHAR IS NULL OR ${local}::DATE <= $2::DATE)`;
  const params = [q.from ?? null, q.to ?? null];
  const money = (e: string) => (o.typed ? `CAST(${e} AS DECIMAL(18,6))` : `${e}::VARCHAR`);
  const day = o.typed ? `CAST(${local} AS DATE)` : `strftime(${local}, '%Y-%m-%d')`;
  const by = keys(q.by);
  if (by.length === 0) {
    const at = o.typed
      ? 'called_at'
      : `strftime(${local}, '%Y-%m-%d %H:%M:%S') AS called_at_local, ${lit(tz)} AS timezone,
         strftime(called_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') AS called_at_utc`;
    return {
      sql: `SELECT ${day} AS date, ${at}, run_id, pipeline, endpoint_id, method, path,
                   http_status, request_id, ${money('charge_cny')} AS charge_cny, ${money('cost_usd')} AS cost_usd,
                   ${money('balance_cny')} AS balance_cny, tasks, ${money('refund_cny')} AS refund_cny, task_id
            FROM ledger ${where} ORDER BY ledger.called_at, call_id`,
      params,
    };
  }
  const expr: Record<LedgerGrouping, string> = {
    day,
    pipeline: 'pipeline',
    endpoint: 'endpoint_id',
    run: 'run_id',
    depth_reason: "coalesce(depth_reason, '')",
  };
  const from = by.includes('depth_reason') ? `${LEDGER_BY_DEPTH_REASON} AS ledger` : 'ledger';
  const cols = by.map((k) => `${expr[k]} AS ${k}`).join(', ');
  return {
    sql: `SELECT ${cols}, count(*) FILTER (WHERE task_id IS NULL)::INT AS calls,
                 count(*) FILTER (WHERE charge_cny IS NULL)::INT AS calls_without_charge,
                 coalesce(sum(tasks), 0)::INT AS tasks,
                 ${money('coalesce(sum(charge_cny), 0)')} AS charge_cny,
                 ${money('coalesce(sum(refund_cny), 0)')} AS refund_cny
          FROM ${from} ${where} GROUP BY ALL ORDER BY ${by.map((_, i) => i + 1).join(', ')}`,
    params,
  };
}

/** Runs the ledger report. */
export async function ledgerReport(wh: Db, q: LedgerQuery): Promise<Record<string, unknown>[]> {
  const { sql, params } = ledgerSql(q);
  return wh.all(sql, params);
}

/**
 * The readable default of `pipeline ledger`: charges by day (in `tz`) and endpoint, then one
 * `total` row (empty day and endpoint) over all of them. Exact decimals, as text.
 */
export async function ledgerSummary(wh: Db, q: Omit<LedgerQuery, 'by'>): Promise<Record<string, unknown>[]> {
  const rows = await ledgerReport(wh, { ...q, by: ['day', 'endpoint'] });
  if (rows.length === 0) return rows;
  const { sql, params } = ledgerSql({ ...q, by: [] });
  const [total] = await wh.all<Record<string, unknown>>(
    `SELECT 'total' AS day, '' AS endpoint, count(*) FILTER (WHERE task_id IS NULL)::INT AS calls,
            count(*) FILTER (WHERE charge_cny IS NULL)::INT AS calls_without_charge,
            coalesce(sum(tasks), 0)::INT AS tasks,
            coalesce(sum(charge_cny::DECIMAL(18,6)), 0)::VARCHAR AS charge_cny,
            coalesce(sum(refund_cny::DECIMAL(18,6)), 0)::VARCHAR AS refund_cny
     FROM (${sql})`,
    params,
  );
  return [...rows, total!];
}

/** Writes the report as a Parquet file with DuckDB's own writer, in DuckDB's own types (money DECIMAL(18,6)). */
export async function ledgerToParquet(wh: Db, q: LedgerQuery, file: string): Promise<void> {
  // COPY takes no parameters: the report goes through a temp table first.
  const { sql, params } = ledgerSql(q, { typed: true });
  await wh.run(`CREATE OR REPLACE TEMP TABLE ledger_report AS ${sql}`, params);
  await wh.run(`COPY ledger_report TO '${file.replaceAll("'", "''")}' (FORMAT parquet)`);
}
