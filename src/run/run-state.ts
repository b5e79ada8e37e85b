import { listValue } from '@duckdb/node-api';
import type { Warehouse } from '../warehouse/index.js';

/** Task states in the `tasks` table, and what a resumed run does with each. */
export type TaskState =
  /** Written before its POST; the POST's outcome is not known (a crash, a timeout). */
  | 'planned'
  /** The POST never reached the service (no connection): safe to post again. */
  | 'unsent'
  /** The POST was sent but its answer never came: must be looked up, never re-posted blindly. */
  | 'unknown'
  | 'posted'
  | 'failed'
  | 'collected';

export interface UnfinishedRun {
  runId: string;
  startedAt: Date;
}

/** The latest run of a pipeline that did not complete (running after a crash, or partial). */
export async function findUnfinishedRun(wh: Warehouse, pipeline: string): Promise<UnfinishedRun | null> {
  const [row] = await wh.all<{ run_id: string; started_at: Date }>(
    `SELECT run_id, started_at FROM runs WHERE pipeline = $1 AND state IN ('running', 'partial')
     ORDER BY started_at DESC LIMIT 1`,
    [pipeline],
  );
  return row ? { runId: row.run_id, startedAt: new Date(row.started_at) } : null;
}

/** Marks a run as running again, keeping its id, so its tags still match its tasks. */
export async function reopenRun(wh: Warehouse, runId: string): Promise<void> {
  await wh.run(`UPDATE runs SET state = 'running', stop_reason = NULL, finished_at = NULL WHERE run_id = $1`, [runId]);
}

/** Every task of the run by tag, with its state. */
export async function taskStates(wh: Warehouse, runId: string): Promise<Map<string, TaskState>> {
  const rows = await wh.all<{ tag: string; state: TaskState }>(`SELECT tag, state FROM tasks WHERE run_id = $1`, [runId]);
  return new Map(rows.map((r) => [r.tag, r.state]));
}

/** Records the outcome of a POST that did not return an envelope. */
export async function markTasks(wh: Warehouse, runId: string, tags: readonly string[], state: 'unsent' | 'unknown', reason: string): Promise<void> {
  if (tags.length === 0) return;
  await wh.run(
    `UPDATE tasks SET state = $2, status_message = $3 WHERE run_id = $1 AND tag IN (SELECT unnest($4::VARCHAR[]))`,
    [runId, state, reason, listOf(tags)],
  );
}

/** Drops task rows that were never sent, so they can be planned and posted again. */
export async function forgetUnsent(wh: Warehouse, runId: string, tags: readonly string[]): Promise<void> {
  if (tags.length === 0) return;
  await wh.run(`DELETE FROM tasks WHERE run_id = $1 AND state = 'unsent' AND tag IN (SELECT unnest($2::VARCHAR[]))`, [runId, listOf(tags)]);
}

/** Binds a tag list as one DuckDB LIST parameter. */
function listOf(tags: readonly string[]) {
  return listValue([...tags]);
}
