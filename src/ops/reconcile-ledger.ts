import { RUN_KEY_KINDS_SQL, type Warehouse } from '../warehouse/index.js';
import { toMicros } from '../post/index.js';

/** One call of the ledgers (not a task's row), as reconciliation reads it. */
export interface CallRow {
  call_id: string;
  request_id: string | null;
  path: string;
  charge: string | null;
  balance: string | null;
  lost: boolean;
  estimated: boolean;
  sandbox: boolean;
  tasks: number;
  day: string;
  at: string;
}

/**
 * The ledgers' calls from `from` on (days in `tz`), merged into one chain by call time, and
 * their refund rows summed by day (sandbox runs' left out).
 */
export async function readLedgers(
  whs: readonly Warehouse[],
  tz: string,
  from: string,
): Promise<{ rows: CallRow[]; refundsByDay: Map<string, bigint> }> {
  const rows: CallRow[] = [];
  const refundsByDay = new Map<string, bigint>();
  for (const wh of whs) {
    rows.push(
      ...(await wh.all<CallRow>(
        `SELECT l.call_id, l.request_id, l.path, l.charge_cny::VARCHAR AS charge, l.balance_cny::VARCHAR AS balance, l.tasks,
                l.http_status IS NULL AS lost, coalesce(l.charge_estimated, false) AS estimated,
                coalesce(r.key_kind = 'sandbox', false) AS sandbox,
                strftime(l.called_at AT TIME ZONE $1, '%Y-%m-%d') AS day, epoch_us(l.called_at)::VARCHAR AS at
         FROM ledger l LEFT JOIN ${RUN_KEY_KINDS_SQL} r USING (run_id)
         WHERE (l.called_at AT TIME ZONE $1)::DATE >= $2::DATE AND l.task_id IS NULL`,
        [tz, from],
      )),
    );
    for (const r of await wh.all<{ day: string; refunded: string }>(
      `SELECT strftime(l.called_at AT TIME ZONE $1, '%Y-%m-%d') AS day, coalesce(sum(l.refund_cny), 0)::VARCHAR AS refunded
       FROM ledger l LEFT JOIN ${RUN_KEY_KINDS_SQL} r USING (run_id)
       WHERE (l.called_at AT TIME ZONE $1)::DATE >= $2::DATE AND l.task_id IS NOT NULL AND NOT coalesce(r.key_kind = 'sandbox', false)
       GROUP BY 1`,
      [tz, from],
    ))
      refundsByDay.set(r.day, (refundsByDay.get(r.day) ?? 0n) + toMicros(r.refunded));
  }
  rows.sort((a, b) => {
    const d = BigInt(a.at) - BigInt(b.at);
    return d < 0n ? -1 : d > 0n ? 1 : a.call_id < b.call_id ? -1 : a.call_id > b.call_id ? 1 : 0;
  });
  return { rows, refundsByDay };
}
