import { integers, runColumns, varchars } from './bulk.js';
import type { Warehouse } from './warehouse.js';

export interface PlannedTaskRow {
  tag: string;
  job: string;
  endpointId: string;
  batchNo: number;
  spec: unknown;
}

export type RunState = 'running' | 'completed' | 'partial' | 'failed';

/**
 * The run and task state tables: every task is written with its tag before its batch is
 * posted, and its id as soon as the response arrives, so a crash never leaves a paid task
 * the warehouse does not know about.
 */
export class RunStore {
  constructor(
    private readonly wh: Warehouse,
    readonly runId: string,
    readonly pipeline: string,
  ) {}

  async startRun(info: { file: string; baseUrl: string; keyKind: string; at: Date }): Promise<void> {
    await this.wh.run(
      `INSERT INTO runs VALUES ($1, $2, $3, $4, $5, 'running', NULL, $6::TIMESTAMPTZ, NULL)`,
      [this.runId, this.pipeline, info.file, info.baseUrl, info.keyKind, info.at.toISOString()],
    );
  }

  async finishRun(state: RunState, reason: string | null, at: Date): Promise<void> {
    await this.wh.run(
      `UPDATE runs SET state = $2, stop_reason = $3, finished_at = $4::TIMESTAMPTZ WHERE run_id = $1`,
      [this.runId, state, reason, at.toISOString()],
    );
  }

  /**
   * Records what each job of the file asked for (labels, mode, settings), replacing what a
   * resumed run recorded before, so BI can filter tasks by job label.
   */
  async recordJobs(jobs: ReadonlyArray<{ name: string; kind: string; labels?: string[]; mode?: string } & Record<string, unknown>>): Promise<void> {
    await this.wh.transaction(async () => {
      await this.wh.run(`DELETE FROM run_jobs WHERE run_id = $1`, [this.runId]);
      for (const j of jobs) {
        const settings = Object.fromEntries(
          Object.entries(j).map(([k, v]) => (Array.isArray(v) && v.length > 20 ? [k, { count: v.length }] : [k, v])),
        );
        await this.wh.run(`INSERT INTO run_jobs VALUES ($1, $2, $3, $4, $5, $6::JSON, $7::JSON)`, [
          this.runId,
          j.name,
          this.pipeline,
          j.kind,
          j.mode ?? null,
          JSON.stringify(j.labels ?? []),
          JSON.stringify(settings),
        ]);
      }
    });
  }

  /**
   * Records a batch's tasks as planned, before the POST that creates them. One statement
   * per batch: a row at a time cost more than the POST itself (bench/engine.ts).
   */
  async planTasks(rows: PlannedTaskRow[], at: Date): Promise<void> {
    if (rows.length === 0) return;
    await runColumns(
      this.wh,
      `INSERT INTO tasks
       SELECT r.tag, $1, $2, r.job, r.endpoint_id, r.batch_no, r.spec::JSON, 'planned', NULL, NULL, NULL, $3::TIMESTAMPTZ, NULL, NULL, NULL
       FROM (SELECT unnest($4::VARCHAR[]) AS tag, unnest($5::VARCHAR[]) AS job, unnest($6::VARCHAR[]) AS endpoint_id,
                    unnest($7::INTEGER[]) AS batch_no, unnest($8::VARCHAR[]) AS spec) AS r`,
      [
        this.runId,
        this.pipeline,
        at.toISOString(),
        varchars(rows.map((r) => r.tag)),
        varchars(rows.map((r) => r.job)),
        varchars(rows.map((r) => r.endpointId)),
        integers(rows.map((r) => r.batchNo)),
        varchars(rows.map((r) => JSON.stringify(r.spec))),
      ],
    );
  }

  /** Records the service's answer for each posted task (id on success, code on failure), in one statement. */
  async recordPosted(rows: { tag: string; taskId: string | null; ok: boolean; statusCode: number; message: string }[], at: Date): Promise<void> {
    if (rows.length === 0) return;
    await runColumns(
      this.wh,
      `UPDATE tasks SET state = v.state, task_id = v.task_id, status_code = v.status_code, status_message = v.message, posted_at = $2::TIMESTAMPTZ
       FROM (SELECT unnest($3::VARCHAR[]) AS tag, unnest($4::VARCHAR[]) AS state, unnest($5::VARCHAR[]) AS task_id,
                    unnest($6::INTEGER[]) AS status_code, unnest($7::VARCHAR[]) AS message) AS v
       WHERE tasks.tag = v.tag AND tasks.run_id = $1`,
      [
        this.runId,
        at.toISOString(),
        varchars(rows.map((r) => r.tag)),
        varchars(rows.map((r) => (r.ok ? 'posted' : 'failed'))),
        varchars(rows.map((r) => r.taskId)),
        integers(rows.map((r) => r.statusCode)),
        varchars(rows.map((r) => r.message)),
      ],
    );
  }

  /** Marks a task collected; called inside the load transaction of its rows. */
  async markCollected(taskId: string, rowsLoaded: number, at: Date): Promise<void> {
    await this.wh.run(
      `UPDATE tasks SET state = 'collected', collected_at = $2::TIMESTAMPTZ, rows_loaded = $3 WHERE task_id = $1`,
      [taskId, at.toISOString(), rowsLoaded],
    );
  }

  /** Marks a task failed at collection (the service answered with an error for it). */
  async markFailed(taskId: string, statusCode: number, message: string): Promise<void> {
    await this.wh.run(`UPDATE tasks SET state = 'failed', status_code = $2, status_message = $3 WHERE task_id = $1`, [taskId, statusCode, message]);
  }

  /** Task ids of this run still waiting to be collected. */
  async pendingTaskIds(): Promise<string[]> {
    const rows = await this.wh.all<{ task_id: string }>(
      `SELECT task_id FROM tasks WHERE run_id = $1 AND state = 'posted' AND task_id IS NOT NULL ORDER BY task_id`,
      [this.runId],
    );
    return rows.map((r) => r.task_id);
  }
}
