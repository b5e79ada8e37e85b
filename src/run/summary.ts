import { runQueries, type Warehouse } from '../warehouse/index.js';

/** What a run did, for people (table) and scripts (`--json`). */
export interface RunSummary {
  runId: string;
  pipeline: string;
  state: 'completed' | 'partial' | 'failed';
  stopReason: string | null;
  /**
   * Why posting or collecting stopped early, or (`lost`) why a run that did all it could is not
   * complete: tasks it posted that the service no longer knows (40401). The CLI maps it to an exit code.
   */
  stopKind: 'budget' | 'balance' | 'unavailable' | 'unknown' | 'interrupted' | 'lost' | null;
  tasks: { planned: number; posted: number; failed: number; collected: number; pending: number };
  /** Rows loaded by the run's collected tasks, all tables together, and the SERP tables apart. */
  rowsLoaded: { total: number; serp_results: number; serp_items: number };
  calls: number;
  /**
   * Net spend of the run, as an exact decimal string: the `X-Svc-Charge-CNY` of its calls
   * less the refunds of its tasks recorded so far (ledger refund rows).
   */
  chargedCny: string;
  /** What came back to the balance for unused depth of the run's tasks (0 when nothing did). */
  refundedCny: string;
  durationMs: number;
  warehouse: string;
  /** True when this invocation finished an earlier unfinished run instead of starting one. */
  resumed?: boolean;
  /**
   * Set when this invocation bought nothing: it waited for the warehouse while another process
   * ran the same pipeline, and that run (this id; the figures above are its) completed meanwhile.
   */
  completedWhileWaiting?: string;
}

/** Reads the run's figures back from the warehouse, so the summary is what was stored. */
export async function summarize(
  wh: Warehouse,
  r: {
    runId: string;
    pipeline: string;
    state: RunSummary['state'];
    stopReason: string | null;
    stopKind: RunSummary['stopKind'];
    started: Date;
    finished: Date;
    warehouseDir: string;
  },
): Promise<RunSummary> {
  // Planned: the plan's count (RunStore.recordPlanSize); a run stopped before its last POST (budget,
  // balance, Ctrl-C) has recorded only the batches it reached in the tasks table.
  const t = await runQueries.taskTotals(wh, r.runId);
  // An item's check_date is its result's (both are the result's datetime), so the run's range of
  // check dates bounds the items it can join: DuckDB then reads the row groups of those nights
  // only, not a year of serp_items (0.25 s at 1,000 keywords x 365 nights). No bound when a
  // result has no date.
  const [span] = await wh.all<{ n: number; lo: string | null; hi: string | null; undated: number }>(
    `SELECT count(*)::INT AS n, min(check_date)::VARCHAR AS lo, max(check_date)::VARCHAR AS hi, count(*) FILTER (WHERE check_date IS NULL)::INT AS undated
     FROM serp_results WHERE run_id = $1`,
    [r.runId],
  );
  const dated = span?.lo && span.hi && span.undated === 0 ? ` AND i.check_date BETWEEN $2::DATE AND $3::DATE` : '';
  const [items] = await wh.all<{ n: number }>(
    `SELECT count(*)::INT AS n FROM serp_items i JOIN serp_results s USING (task_id, result_index) WHERE s.run_id = $1${dated}`,
    dated ? [r.runId, span!.lo, span!.hi] : [r.runId],
  );
  const [money] = await wh.all<{ calls: number; charged: string; refunded: string }>(
    `SELECT count(*) FILTER (WHERE task_id IS NULL)::INT AS calls, coalesce(sum(charge_cny), 0)::VARCHAR AS charged,
            coalesce(sum(refund_cny), 0)::VARCHAR AS refunded
     FROM ledger WHERE run_id = $1`,
    [r.runId],
  );
  return {
    runId: r.runId,
    pipeline: r.pipeline,
    state: r.state,
    stopReason: r.stopReason,
    stopKind: r.stopKind,
    tasks: {
      planned: t?.planned ?? 0,
      posted: t?.posted ?? 0,
      failed: t?.failed ?? 0,
      collected: t?.collected ?? 0,
      pending: t?.pending ?? 0,
    },
    rowsLoaded: { total: t?.rows_total ?? 0, serp_results: span?.n ?? 0, serp_items: items?.n ?? 0 },
    calls: money?.calls ?? 0,
    chargedCny: money?.charged ?? '0',
    refundedCny: money?.refunded ?? '0',
    durationMs: r.finished.getTime() - r.started.getTime(),
    warehouse: r.warehouseDir,
  };
}
