import type { ServingReader } from '../warehouse/index.js';

/** A warehouse, or its serving catalog (the published ledger), to query. */
type Db = ServingReader;

export type LedgerGrouping = 'day' | 'pipeline' | 'endpoint' | 'run';

export interface LedgerQuery {
  /** Inclusive UTC day, `yyyy-mm-dd`. */
  from?: string;
  /** Inclusive UTC day, `yyyy-mm-dd`. */
  to?: string;
  by?: LedgerGrouping;
}

const KEY: Record<LedgerGrouping, string> = {
  day: `strftime(called_at AT TIME ZONE 'UTC', '%Y-%m-%d')`,
  pipeline: 'pipeline',
  endpoint: 'endpoint_id',
  run: 'run_id',
};

/**
 * The SQL of the ledger report: one row per call or refund, or per group with `by` (net
 * charges: refund rows count negative, and apart in `refund_cny`). Charges are
 * summed as DECIMAL and returned as text so no float touches money; calls whose charge
 * header was missing are counted apart, since they are what a reconciliation looks at.
 * `typed` (a Parquet file) keeps DuckDB's own types instead: money DECIMAL(18,6), times
 * TIMESTAMP WITH TIME ZONE (UTC), the day a DATE, as the published `parquet/ledger` has them.
 */
export function ledgerSql(q: LedgerQuery, o: { typed?: boolean } = {}): { sql: string; params: (string | null)[] } {
  const where = `WHERE ($1::VARCHAR IS NULL OR called_at >= $1::DATE::TIMESTAMPTZ)
    AND ($2::VARCHAR IS NULL OR called_at < ($2::DATE + INTERVAL 1 DAY)::TIMESTAMPTZ)`;
  const params = [q.from ?? null, q.to ?? null];
  const money = (e: string) => (o.typed ? `CAST(${e} AS DECIMAL(18,6))` : `${e}::VARCHAR`);
  if (!q.by) {
    const at = o.typed ? 'called_at' : `strftime(called_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ')`;
    return {
      sql: `SELECT ${at} AS called_at, run_id, pipeline, endpoint_id, method, path,
                   http_status, request_id, ${money('charge_cny')} AS charge_cny, ${money('cost_usd')} AS cost_usd,
                   ${money('balance_cny')} AS balance_cny, tasks, ${money('refund_cny')} AS refund_cny, task_id
            FROM ledger ${where} ORDER BY called_at, call_id`,
      params,
    };
  }
  const key = q.by === 'day' && o.typed ? `CAST(called_at AT TIME ZONE 'UTC' AS DATE)` : KEY[q.by];
  return {
    sql: `SELECT ${key} AS ${q.by}, count(*) FILTER (WHERE task_id IS NULL)::INT AS calls,
                 count(*) FILTER (WHERE charge_cny IS NULL)::INT AS calls_without_charge,
                 coalesce(sum(tasks), 0)::INT AS tasks,
                 ${money('coalesce(sum(charge_cny), 0)')} AS charge_cny,
                 ${money('coalesce(sum(refund_cny), 0)')} AS refund_cny
          FROM ledger ${where} GROUP BY 1 ORDER BY 1`,
    params,
  };
}

/** Runs the ledger report. */
export async function ledgerReport(wh: Db, q: LedgerQuery): Promise<Record<string, unknown>[]> {
  const { sql, params } = ledgerSql(q);
  return wh.all(sql, params);
}

/** Writes the report as a Parquet file with DuckDB's own writer, in DuckDB's own types (money DECIMAL(18,6)). */
export async function ledgerToParquet(wh: Db, q: LedgerQuery, file: string): Promise<void> {
  // COPY takes no parameters: the report goes through a temp table first.
  const { sql, params } = ledgerSql(q, { typed: true });
  await wh.run(`CREATE OR REPLACE TEMP TABLE ledger_report AS ${sql}`, params);
  await wh.run(`COPY ledger_report TO '${file.replaceAll("'", "''")}' (FORMAT parquet)`);
}
