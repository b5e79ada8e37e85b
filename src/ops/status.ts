import type { Warehouse } from '../warehouse/index.js';

/** One run as `pipeline status` shows it. */
export interface RunStatus {
  runId: string;
  pipeline: string;
  state: string;
  startedAt: string;
  /** When the ingest ended: the run's loads committed (the models and the publish come after). */
  finishedAt: string | null;
  /** The ingest's seconds: posting, collecting and loading, not the steps after it. */
  durationS: number | null;
  tasks: { planned: number; posted: number; collected: number; failed: number; waiting: number; unresolved: number };
  rowsLoaded: number;
  calls: number;
  /** Exact decimal string. */
  chargedCny: string;
  stopReason: string | null;
}

/** Recent runs (newest first), or one run, with their figures read from the warehouse. */
export async function runStatuses(wh: Warehouse, opts: { runId?: string; limit?: number } = {}): Promise<RunStatus[]> {
  const rows = await wh.all<Record<string, unknown>>(
    `WITH t AS (
       SELECT run_id,
              count(*)::INT AS planned,
              count(task_id)::INT AS posted,
              count(*) FILTER (WHERE state = 'collected')::INT AS collected,
              count(*) FILTER (WHERE state = 'failed')::INT AS failed,
              count(*) FILTER (WHERE state = 'posted')::INT AS waiting,
              count(*) FILTER (WHERE state IN ('planned', 'unknown', 'unsent'))::INT AS unresolved,
              coalesce(sum(rows_loaded), 0)::BIGINT AS rows_loaded
       FROM tasks GROUP BY run_id
     ),
     l AS (
       SELECT run_id, count(*) FILTER (WHERE task_id IS NULL)::INT AS calls, coalesce(sum(charge_cny), 0) AS charged FROM ledger GROUP BY run_id
     )
     SELECT r.run_id, r.pipeline, r.state, r.stop_reason,
            strftime(r.started_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS started_at,
            strftime(r.finished_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS finished_at,
            epoch(r.finished_at) - epoch(r.started_at) AS duration_s,
            greatest(coalesce(t.planned, 0), coalesce(r.planned_tasks, 0)) AS planned, coalesce(t.posted, 0) AS posted, coalesce(t.collected, 0) AS collected,
            coalesce(t.failed, 0) AS failed, coalesce(t.waiting, 0) AS waiting, coalesce(t.unresolved, 0) AS unresolved,
            coalesce(t.rows_loaded, 0)::DOUBLE AS rows_loaded,
            coalesce(l.calls, 0) AS calls, coalesce(l.charged, 0)::VARCHAR AS charged
     FROM runs r LEFT JOIN t USING (run_id) LEFT JOIN l USING (run_id)
     WHERE $1::VARCHAR IS NULL OR r.run_id = $1
     ORDER BY r.started_at DESC
     LIMIT $2`,
    [opts.runId ?? null, opts.limit ?? 20],
  );
  return rows.map((r) => ({
    runId: r.run_id as string,
    pipeline: r.pipeline as string,
    state: r.state as string,
    startedAt: r.started_at as string,
    finishedAt: (r.finished_at as string | null) ?? null,
    durationS: r.duration_s === null ? null : Number(r.duration_s),
    tasks: {
      planned: r.planned as number,
      posted: r.posted as number,
      collected: r.collected as number,
      failed: r.failed as number,
      waiting: r.waiting as number,
      unresolved: r.unresolved as number,
    },
    rowsLoaded: Number(r.rows_loaded),
    calls: r.calls as number,
    chargedCny: r.charged as string,
    stopReason: (r.stop_reason as string | null) ?? null,
  }));
}
