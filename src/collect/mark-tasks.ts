import { integers, runColumns, varchars, type Warehouse } from '../warehouse/index.js';

/**
 * Marks many tasks of a run collected in one statement (inside the load transaction of
 * their rows), with the rows each loaded. One UPDATE per task costs more than the rows
 * themselves at callback rates.
 */
export async function markCollectedMany(wh: Warehouse, runId: string, rows: ReadonlyMap<string, number>, at: Date): Promise<void> {
  if (rows.size === 0) return;
  await runColumns(
    wh,
    `UPDATE tasks SET state = 'collected', collected_at = $2::TIMESTAMPTZ, rows_loaded = v.n
     FROM (SELECT unnest($3::VARCHAR[]) AS id, unnest($4::INTEGER[]) AS n) AS v
     WHERE tasks.run_id = $1 AND tasks.task_id = v.id AND tasks.state IN ('posted', 'collected')`,
    [runId, at.toISOString(), varchars([...rows.keys()]), integers([...rows.values()])],
  );
}

/** Marks tasks failed with the status the service gave them (a postback of a failed task). */
export async function markFailedMany(wh: Warehouse, runId: string, rows: readonly { taskId: string; statusCode: number; message: string }[]): Promise<void> {
  if (rows.length === 0) return;
  await runColumns(
    wh,
    `UPDATE tasks SET state = 'failed', status_code = v.c, status_message = v.m
     FROM (SELECT unnest($2::VARCHAR[]) AS id, unnest($3::INTEGER[]) AS c, unnest($4::VARCHAR[]) AS m) AS v
     WHERE tasks.run_id = $1 AND tasks.task_id = v.id AND tasks.state = 'posted'`,
    [runId, varchars(rows.map((r) => r.taskId)), integers(rows.map((r) => r.statusCode)), varchars(rows.map((r) => r.message))],
  );
}
