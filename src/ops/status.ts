import { runQueries, type Warehouse } from '../warehouse/index.js';

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
  const rows = await runQueries.recentRuns(wh, opts.runId ?? null, opts.limit ?? 20);
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
