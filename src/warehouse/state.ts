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

  /** Records a batch's tasks as planned, before the POST that creates them. */
  async planTasks(rows: PlannedTaskRow[], at: Date): Promise<void> {
    await this.wh.transaction(async () => {
      for (const r of rows) {
        await this.wh.run(
          `INSERT INTO tasks VALUES ($1, $2, $3, $4, $5, $6, $7::JSON, 'planned', NULL, NULL, NULL, $8::TIMESTAMPTZ, NULL, NULL, NULL)`,
          [r.tag, this.runId, this.pipeline, r.job, r.endpointId, r.batchNo, JSON.stringify(r.spec), at.toISOString()],
        );
      }
    });
  }

  /** Records the service's answer for each posted task (id on success, code on failure). */
  async recordPosted(rows: { tag: string; taskId: string | null; ok: boolean; statusCode: number; message: string }[], at: Date): Promise<void> {
    await this.wh.transaction(async () => {
      for (const r of rows) {
        await this.wh.run(
          `UPDATE tasks SET state = $3, task_id = $4, status_code = $5, status_message = $6, posted_at = $7::TIMESTAMPTZ
           WHERE tag = $1 AND run_id = $2`,
          [r.tag, this.runId, r.ok ? 'posted' : 'failed', r.taskId, r.statusCode, r.message, at.toISOString()],
        );
      }
    });
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
