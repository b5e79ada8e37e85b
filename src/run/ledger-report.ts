import type { Warehouse } from '../warehouse/index.js';

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
 */
export function ledgerSql(q: LedgerQuery): { sql: string; params: (string | null)[] } {
  const where = `WHERE ($1::VARCHAR IS NULL OR called_at >= $1::DATE::TIMESTAMPTZ)
    AND ($2::VARCHAR IS NULL OR called_at < ($2::DATE + INTERVAL 1 DAY)::TIMESTAMPTZ)`;
  const params = [q.from ?? null, q.to ?? null];
  if (!q.by) {
    return {
      sql: `SELECT strftime(called_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS called_at, run_id, pipeline, endpoint_id, method, path,
                   http_status, request_id, charge_cny::VARCHAR AS charge_cny, cost_usd::VARCHAR AS cost_usd,
                   balance_cny::VARCHAR AS balance_cny, tasks, refund_cny::VARCHAR AS refund_cny, task_id
            FROM ledger ${where} ORDER BY called_at, call_id`,
      params,
    };
  }
  return {
    sql: `SELECT ${KEY[q.by]} AS ${q.by}, count(*) FILTER (WHERE task_id IS NULL)::INT AS calls,
                 count(*) FILTER (WHERE charge_cny IS NULL)::INT AS calls_without_charge,
                 coalesce(sum(tasks), 0)::INT AS tasks,
                 coalesce(sum(charge_cny), 0)::VARCHAR AS charge_cny,
                 coalesce(sum(refund_cny), 0)::VARCHAR AS refund_cny
          FROM ledger ${where} GROUP BY 1 ORDER BY 1`,
    params,
  };
}

/** Runs the ledger report. */
export async function ledgerReport(wh: Warehouse, q: LedgerQuery): Promise<Record<string, unknown>[]> {
  const { sql, params } = ledgerSql(q);
  return wh.all(sql, params);
}

/** Writes the report as a Parquet file with DuckDB's own writer. */
export async function ledgerToParquet(wh: Warehouse, q: LedgerQuery, file: string): Promise<void> {
  // COPY takes no parameters: the report goes through a temp table first.
  const { sql, params } = ledgerSql(q);
  await wh.run(`CREATE OR REPLACE TEMP TABLE ledger_report AS ${sql}`, params);
  await wh.run(`COPY ledger_report TO '${file.replaceAll("'", "''")}' (FORMAT parquet)`);
}
