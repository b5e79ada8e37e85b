import { integers, runColumns, varchars } from '../bulk.js';
import { sqlString } from '../columns.js';
import type { Warehouse } from '../warehouse.js';
import { runStatesInto, sqlStates, taskStatesInto, type RunState, type RunStep, type TaskState } from './lifecycle.js';
import { runQueries, type EndpointCounts, type OpenTask, type UnfinishedRun } from './run-queries.js';

export * from './run-queries.js';

/** The task status of a rate-limit refusal: the task was not created. */
const RATE_LIMITED = 40202;

export interface PlannedTaskRow {
  tag: string;
  job: string;
  endpointId: string;
  batchNo: number;
  spec: unknown;
  /** Why its depth, for a `depth: auto` task (tasks.depth_reason). */
  depthReason?: string | null;
}

/** What a POST's answer says of one of its tasks: its id when created, the service's code either way. */
export interface PostedTaskRow {
  tag: string;
  taskId: string | null;
  ok: boolean;
  statusCode: number;
  message: string;
  /** The task's raw USD `cost` as the POST answered it (or `id_list` listed it); a refund is measured against it. */
  costUsd?: number | null;
  /** The client's call id of the POST that created it (its ledger row), whose CNY/USD ratio prices a refund. */
  postCallId?: string | null;
}

/** A step of a run as its journal holds it: done (or skipped), or started and owed; `detail` says which lake, or why skipped. */
export interface StepRecord {
  done: boolean;
  detail: string | null;
}

const INTO = {
  posted: sqlStates(taskStatesInto('posted')),
  unsent: sqlStates(taskStatesInto('unsent')),
  unknown: sqlStates(taskStatesInto('unknown')),
  collected: sqlStates(taskStatesInto('collected')),
  failed: sqlStates(taskStatesInto('failed')),
  runRunning: sqlStates(runStatesInto('running')),
  runSuperseded: sqlStates(runStatesInto('superseded')),
};

/**
 * The only writer of the `runs` and `tasks` tables. Every task is written with its tag
 * before its batch is posted, and its id as soon as the response arrives, so a crash never
 * leaves a paid task the warehouse does not know about. Each verb moves tasks only along
 * the legal moves of `lifecycle.ts` (the UPDATE's guard is made from that table), so a late
 * or repeated event cannot move a task backwards. Build one per connection: the loader on a
 * second connection makes its own.
 */
export class RunStore {
  constructor(
    private readonly wh: Warehouse,
    readonly runId: string,
    readonly pipeline: string = '',
  ) {}

  /** Runs of a pipeline that did not finish, oldest first ({@link runQueries.unfinishedRuns}). */
  static unfinishedRuns(wh: Warehouse, pipeline: string): Promise<UnfinishedRun[]> {
    return runQueries.unfinishedRuns(wh, pipeline);
  }

  async startRun(info: { file: string; baseUrl: string; keyKind: string; at: Date }): Promise<void> {
    await this.wh.run(
      `INSERT INTO runs (run_id, pipeline, pipeline_file, base_url, key_kind, state, stop_reason, started_at, finished_at)
       VALUES ($1, $2, $3, $4, $5, 'running', NULL, $6::TIMESTAMPTZ, NULL)`,
      [this.runId, this.pipeline, info.file, info.baseUrl, info.keyKind, info.at.toISOString()],
    );
  }

  /**
   * Records how many tasks the run's plan holds. The tasks table gets a batch's tasks just before
   * its POST, so a run stopped early (budget, balance, Ctrl-C) holds fewer there; `pipeline
   * status` and the run's summary show the plan's count.
   */
  async recordPlanSize(tasks: number): Promise<void> {
    await this.wh.run(`UPDATE runs SET planned_tasks = $2 WHERE run_id = $1`, [this.runId, tasks]);
  }

  /**
   * Marks the run running again, keeping its id, so its tags still match its tasks. Its journal
   * is cleared in the same transaction: every step after the ingest runs again on what it adds.
   */
  async reopenRun(): Promise<void> {
    await this.wh.transaction(async () => {
      await this.wh.run(`UPDATE runs SET state = 'running', stop_reason = NULL, finished_at = NULL WHERE run_id = $1 AND state IN (${INTO.runRunning})`, [
        this.runId,
      ]);
      await this.wh.run(`DELETE FROM run_steps WHERE run_id = $1`, [this.runId]);
    });
  }

  /** Records the run's end state, and its ingest step done in the journal, in one transaction. */
  async finishRun(state: Exclude<RunState, 'running' | 'superseded'>, reason: string | null, at: Date): Promise<void> {
    await this.wh.transaction(async () => {
      await this.wh.run(
        `UPDATE runs SET state = $2, stop_reason = $3, finished_at = $4::TIMESTAMPTZ WHERE run_id = $1 AND state IN (${sqlStates(runStatesInto(state))})`,
        [this.runId, state, reason, at.toISOString()],
      );
      await this.stepDone('ingest', at, state);
    });
  }

  /** The run's journal: each step it holds, done or only started (owed). */
  async steps(): Promise<Map<RunStep, StepRecord>> {
    const rows = await this.wh.all<{ step: RunStep; done: boolean; detail: string | null }>(
      `SELECT step, done_at IS NOT NULL AS done, detail FROM run_steps WHERE run_id = $1`,
      [this.runId],
    );
    return new Map(rows.map((r) => [r.step, { done: r.done, detail: r.detail }]));
  }

  /** A step starts: its journal row says so (owed until {@link stepDone}), with its detail (the lake step's address). */
  async stepStarted(step: RunStep, at: Date, detail: string | null = null): Promise<void> {
    await this.wh.transaction(async () => {
      await this.wh.run(`DELETE FROM run_steps WHERE run_id = $1 AND step = $2`, [this.runId, step]);
      await this.wh.run(`INSERT INTO run_steps VALUES ($1, $2, $3::TIMESTAMPTZ, NULL, $4)`, [this.runId, step, at.toISOString(), detail]);
    });
  }

  /** A step is done (or skipped, `detail` saying why): the next invocation does not do it again. */
  async stepDone(step: RunStep, at: Date, detail: string | null = null): Promise<void> {
    await this.wh.transaction(async () => {
      await this.wh.run(`UPDATE run_steps SET done_at = $3::TIMESTAMPTZ, detail = coalesce($4, detail) WHERE run_id = $1 AND step = $2`, [
        this.runId,
        step,
        at.toISOString(),
        detail,
      ]);
      await this.wh.run(
        `INSERT INTO run_steps SELECT $1, $2, $3::TIMESTAMPTZ, $3::TIMESTAMPTZ, $4 WHERE NOT EXISTS (SELECT 1 FROM run_steps WHERE run_id = $1 AND step = $2)`,
        [this.runId, step, at.toISOString(), detail],
      );
    });
  }

  /**
   * After `pipeline lake sync` mirrored the warehouse: every completed run whose steps up to its
   * publish are done, and which owed only its summary, checkpoint or lake, is finished (those are
   * recorded done, the lake's with `url`). Returns the runs finished so, and the runs still owing
   * an earlier step (with the steps), which only a run finishes.
   */
  static async lakeSynced(wh: Warehouse, url: string, at: Date): Promise<{ finished: string[]; owing: { runId: string; steps: string[] }[] }> {
    const before = ['ingest', 'clusters', 'models', 'alerts', 'publish'];
    const open = await wh.all<{ run_id: string; done: string[] }>(
      `SELECT r.run_id, list(j.step) FILTER (WHERE j.done_at IS NOT NULL) AS done
       FROM runs AS r JOIN run_steps AS j USING (run_id)
       WHERE r.state = 'completed'
       GROUP BY r.run_id, r.started_at
       HAVING count(*) FILTER (WHERE j.step = 'lake' AND j.done_at IS NOT NULL) = 0
       ORDER BY r.started_at, r.run_id`,
    );
    const finished: string[] = [];
    const owing: { runId: string; steps: string[] }[] = [];
    for (const r of open) {
      const owed = before.filter((step) => !(r.done ?? []).includes(step));
      if (owed.length) {
        owing.push({ runId: r.run_id, steps: owed });
        continue;
      }
      const s = new RunStore(wh, r.run_id);
      await wh.transaction(async () => {
        for (const step of ['summary', 'checkpoint'] as const) await s.stepDone(step, at);
        await s.stepDone('lake', at, url);
      });
      finished.push(r.run_id);
    }
    return { finished, owing };
  }

  /** Marks an older run settled: what it posted is collected, nothing of unknown outcome is left. */
  async supersedeRun(by: string, at: Date): Promise<void> {
    await this.wh.run(
      `UPDATE runs SET state = 'superseded', stop_reason = coalesce(stop_reason || '; ', '') || $2, finished_at = $3::TIMESTAMPTZ
       WHERE run_id = $1 AND state IN (${INTO.runSuperseded})`,
      [this.runId, `settled and superseded by run ${by}`, at.toISOString()],
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
        const settings = Object.fromEntries(Object.entries(j).map(([k, v]) => (Array.isArray(v) && v.length > 20 ? [k, { count: v.length }] : [k, v])));
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
   * Records a batch's tasks as `planned`, before the POST that creates them. One statement
   * per batch: a row at a time would cost more than the POST itself.
   */
  async recordPlanned(rows: readonly PlannedTaskRow[], at: Date): Promise<void> {
    if (rows.length === 0) return;
    await runColumns(
      this.wh,
      `INSERT INTO tasks
       SELECT r.tag, $1, $2, r.job, r.endpoint_id, r.batch_no, r.spec::JSON, 'planned', NULL, NULL, NULL, $3::TIMESTAMPTZ, NULL, NULL, NULL, NULL, NULL, r.depth_reason
       FROM (SELECT unnest($4::VARCHAR[]) AS tag, unnest($5::VARCHAR[]) AS job, unnest($6::VARCHAR[]) AS endpoint_id,
                    unnest($7::INTEGER[]) AS batch_no, unnest($8::VARCHAR[]) AS spec, unnest($9::VARCHAR[]) AS depth_reason) AS r`,
      [
        this.runId,
        this.pipeline,
        at.toISOString(),
        varchars(rows.map((r) => r.tag)),
        varchars(rows.map((r) => r.job)),
        varchars(rows.map((r) => r.endpointId)),
        integers(rows.map((r) => r.batchNo)),
        varchars(rows.map((r) => JSON.stringify(r.spec))),
        varchars(rows.map((r) => r.depthReason ?? null)),
      ],
    );
  }

  /**
   * Records the service's answer for each task of a POST, or of an `id_list` look-up: `posted`
   * with its id when created, `failed` with the code when refused, `unsent` when refused for the
   * rate limit (40202: not created, not charged; the client posted it again until it gave up). One statement. A row without a
   * `postCallId` (a look-up of a lost POST's tasks) keeps the one recorded with the tasks.
   */
  async recordPosted(rows: readonly PostedTaskRow[], at: Date): Promise<void> {
    if (rows.length === 0) return;
    await runColumns(
      this.wh,
      `UPDATE tasks SET state = v.state, task_id = v.task_id, status_code = v.status_code, status_message = v.message, posted_at = $2::TIMESTAMPTZ,
              cost_usd = v.cost_usd::DECIMAL(18,6), post_call_id = coalesce(v.post_call_id, tasks.post_call_id)
       FROM (SELECT unnest($3::VARCHAR[]) AS tag, unnest($4::VARCHAR[]) AS state, unnest($5::VARCHAR[]) AS task_id,
                    unnest($6::INTEGER[]) AS status_code, unnest($7::VARCHAR[]) AS message, unnest($8::VARCHAR[]) AS cost_usd,
                    unnest($9::VARCHAR[]) AS post_call_id) AS v
       WHERE tasks.tag = v.tag AND tasks.run_id = $1 AND tasks.state IN (${INTO.posted})`,
      [
        this.runId,
        at.toISOString(),
        varchars(rows.map((r) => r.tag)),
        // 40202 (rate limited) created nothing: unsent, posted again by the next run; any other refusal is final.
        varchars(rows.map((r) => (r.ok ? 'posted' : r.statusCode === RATE_LIMITED ? 'unsent' : 'failed'))),
        varchars(rows.map((r) => r.taskId)),
        integers(rows.map((r) => r.statusCode)),
        varchars(rows.map((r) => r.message)),
        varchars(rows.map((r) => (typeof r.costUsd === 'number' && Number.isFinite(r.costUsd) ? r.costUsd.toFixed(6) : null))),
        varchars(rows.map((r) => r.postCallId ?? null)),
      ],
    );
  }

  /** A POST that created nothing (no connection, 402, repeated 429): its tasks may be posted again. */
  async recordUnsent(tags: readonly string[], reason: string): Promise<void> {
    await this.#markTags(tags, 'unsent', INTO.unsent, reason);
  }

  /**
   * The call about to send these tasks (each attempt's id, before it goes): kept on them
   * (`post_call_id`), so that if this process dies while the call is out, the next run's
   * look-up that finds them by tag prices the call's ledger row, written with this in one
   * transaction (the run's client's `sending`, ledgerWriter.sent, ledgerWriter.estimateLost).
   * Written in, not bound: a statement with parameters is three calls into DuckDB (extract,
   * prepare, run), and a live night makes one per call.
   */
  async recordSending(tags: readonly string[], callId: string): Promise<void> {
    if (tags.length === 0) return;
    await this.wh.transaction(() =>
      this.wh.run(
        `UPDATE tasks SET post_call_id = ${sqlString(callId)} WHERE run_id = ${sqlString(this.runId)} AND tag IN (${tags.map(sqlString).join(', ')})`,
      ),
    );
  }

  /**
   * A POST whose outcome is unknown (sent, no answer): its tasks are looked up by tag, never
   * re-posted blindly. They already name the call (`post_call_id`, recordSending), so the
   * look-up that finds them prices its ledger row (ledgerWriter.estimateLost).
   */
  async recordUnknown(tags: readonly string[], reason: string): Promise<void> {
    await this.#markTags(tags, 'unknown', INTO.unknown, reason);
  }

  async #markTags(tags: readonly string[], state: TaskState, from: string, reason: string): Promise<void> {
    if (tags.length === 0) return;
    await runColumns(this.wh, `UPDATE tasks SET state = $2, status_message = $3 WHERE run_id = $1 AND state IN (${from}) AND tag IN (SELECT unnest($4::VARCHAR[]))`, [
      this.runId,
      state,
      reason,
      varchars(tags),
    ]);
  }

  /** Drops task rows that were never sent, so they are planned and posted again. */
  async forgetUnsent(tags: readonly string[]): Promise<void> {
    if (tags.length === 0) return;
    await runColumns(this.wh, `DELETE FROM tasks WHERE run_id = $1 AND state = 'unsent' AND tag IN (SELECT unnest($2::VARCHAR[]))`, [this.runId, varchars(tags)]);
  }

  /**
   * Marks tasks collected with the rows each loaded, in one statement; called inside the
   * load transaction of their rows. A collected task collected again (a reload) keeps the
   * state and takes the new count.
   */
  async markCollected(rows: ReadonlyMap<string, number>, at: Date): Promise<void> {
    if (rows.size === 0) return;
    await runColumns(
      this.wh,
      `UPDATE tasks SET state = 'collected', collected_at = $2::TIMESTAMPTZ, rows_loaded = v.n
       FROM (SELECT unnest($3::VARCHAR[]) AS id, unnest($4::INTEGER[]) AS n) AS v
       WHERE tasks.run_id = $1 AND tasks.task_id = v.id AND tasks.state IN (${INTO.collected})`,
      [this.runId, at.toISOString(), varchars([...rows.keys()]), integers([...rows.values()])],
    );
  }

  /** Marks tasks failed with the status the service gave them at collection. */
  async markFailed(rows: readonly { taskId: string; statusCode: number; message: string }[]): Promise<void> {
    if (rows.length === 0) return;
    await runColumns(
      this.wh,
      `UPDATE tasks SET state = 'failed', status_code = v.c, status_message = v.m
       FROM (SELECT unnest($2::VARCHAR[]) AS id, unnest($3::INTEGER[]) AS c, unnest($4::VARCHAR[]) AS m) AS v
       WHERE tasks.run_id = $1 AND tasks.task_id = v.id AND tasks.state IN (${INTO.failed})`,
      [this.runId, varchars(rows.map((r) => r.taskId)), integers(rows.map((r) => r.statusCode)), varchars(rows.map((r) => r.message))],
    );
  }

  /** A re-parsed task fetched again: its rows were replaced, so its count is the new one (any run's task). */
  static async recordReloaded(wh: Warehouse, taskId: string, rowsLoaded: number): Promise<void> {
    await wh.run(`UPDATE tasks SET rows_loaded = $2 WHERE task_id = $1 AND state IN (${INTO.collected})`, [taskId, rowsLoaded]);
  }

  /** Task ids of this run still waiting to be collected, optionally of one endpoint. */
  async pendingTaskIds(endpointId?: string): Promise<string[]> {
    return (await this.pendingTasks(endpointId)).map((r) => r.taskId);
  }

  /** Tasks of this run still waiting to be collected, with their endpoint and job. */
  pendingTasks(endpointId?: string): Promise<{ taskId: string; endpointId: string; job: string }[]> {
    return runQueries.pendingTasks(this.wh, this.runId, endpointId);
  }

  /** Endpoints of this run with tasks still waiting to be collected (from state, not from the current file). */
  waitingEndpointIds(): Promise<string[]> {
    return runQueries.waitingEndpointIds(this.wh, this.runId);
  }

  /** Tasks whose POST outcome is not known, as recorded (so an edited file cannot hide them). */
  openTasks(): Promise<OpenTask[]> {
    return runQueries.openTasks(this.wh, this.runId);
  }

  /** Counts of the run's tasks per post endpoint (what progress lines show). */
  countsByEndpoint(): Promise<EndpointCounts[]> {
    return runQueries.countsByEndpoint(this.wh, this.runId);
  }

  /** Every task of the run by tag, with its state. */
  taskStates(): Promise<Map<string, TaskState>> {
    return runQueries.taskStates(this.wh, this.runId);
  }
}
