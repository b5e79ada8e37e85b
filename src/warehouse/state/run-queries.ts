import { TASK_UNITS_SQL } from '../../catalog/index.js';
import { sqlList } from '../columns.js';
import type { Warehouse } from '../warehouse.js';
import { runStatesInto, sqlStates, type RunState, type TaskState } from './lifecycle.js';

/**
 * The named reads of the `runs` and `tasks` tables: RunStore writes them, and every stage that
 * reads them asks here (or reads the staging models), so a change of their columns or of a
 * state's meaning is made in one place.
 */

export interface UnfinishedRun {
  runId: string;
  startedAt: Date;
  /**
   * `running`, `partial` or `failed`: it may hold tasks to collect, look up or post. `completed`:
   * every task is collected and loaded, but no publish has its row yet (a crash in the steps
   * after the loads: models, alerts, publish, summary, checkpoint, lake): only those steps are
   * left, nothing to buy.
   */
  state: RunState;
}

/** A run's tasks by post endpoint: created, collected, failed, still waiting. */
export interface EndpointCounts {
  endpointId: string;
  posted: number;
  collected: number;
  failed: number;
  pending: number;
}

/** A task whose POST outcome is not known, as recorded. */
export interface OpenTask {
  tag: string;
  endpointId: string;
  plannedAt: Date;
  postCallId: string | null;
}

/** Sums per-endpoint counts. */
export function totalCounts(rows: readonly EndpointCounts[]): Omit<EndpointCounts, 'endpointId'> {
  const t = { posted: 0, collected: 0, failed: 0, pending: 0 };
  for (const r of rows) {
    t.posted += r.posted;
    t.collected += r.collected;
    t.failed += r.failed;
    t.pending += r.pending;
  }
  return t;
}

/**
 * SQL that is true when run `r` (a `runs` row; `p` its `publish_runs` row, joined) is finished:
 * its journal (`run_steps`) has its last step, `lake`, done. A run without a journal (made
 * before the journal was kept) is finished once a publish has its row as it is now.
 */
export function runFinishedSql(r: string, p: string): string {
  return `(CASE WHEN EXISTS (SELECT 1 FROM run_steps AS j WHERE j.run_id = ${r}.run_id)
     THEN EXISTS (SELECT 1 FROM run_steps AS j WHERE j.run_id = ${r}.run_id AND j.step = 'lake' AND j.done_at IS NOT NULL)
     ELSE ${p}.run_id IS NOT NULL AND ${p}.state IS NOT DISTINCT FROM ${r}.state AND ${p}.finished_at IS NOT DISTINCT FROM ${r}.finished_at END)`;
}

const SUPERSEDED_FROM = sqlStates(runStatesInto('superseded'));

/** A run as another invocation found it: its id and times. */
export interface RunTimes {
  runId: string;
  startedAt: Date;
  finishedAt: Date;
}

/** A read of the tasks table per run: every task's pipeline (the report joins it by task id). */
export const TASK_PIPELINES_SQL = `select task_id, coalesce(any_value(pipeline), '(unknown)') as pipeline from tasks where task_id is not null group by task_id`;

/** A read of the runs table: each run's key kind (`sandbox` calls are left out of money checks). */
export const RUN_KEY_KINDS_SQL = `(SELECT run_id, key_kind FROM runs)`;

/**
 * A read of the tasks table as a relation `(call_id, u)`: the units of the tasks each POST of
 * `callIdsSql` (a subquery of call ids) posted, by `post_call_id` (TASK_UNITS_SQL).
 */
export function taskUnitsByCallSql(callIdsSql: string): string {
  return `SELECT post_call_id AS call_id, sum(${TASK_UNITS_SQL})::DOUBLE AS u FROM tasks
               WHERE post_call_id IN (${callIdsSql}) GROUP BY 1`;
}

export const runQueries = {
  /**
   * Runs of a pipeline that did not finish, oldest first: those that did not complete (each may
   * hold paid tasks still to collect or look up), and those that completed their loads but whose
   * later steps are not all done. A run is finished when its journal (`run_steps`) has every
   * step done, the lake included ({@link runFinishedSql}): before that, a crash or a failure in
   * the steps after the loads (clusters, models, alerts, publish, summary, checkpoint, lake) left
   * it `completed` with its rows loaded, and the next invocation must finish those steps, not buy
   * the night again.
   */
  async unfinishedRuns(wh: Warehouse, pipeline: string): Promise<UnfinishedRun[]> {
    const rows = await wh.all<{ run_id: string; started_at: Date; state: RunState }>(
      `SELECT r.run_id, r.started_at, r.state FROM runs AS r LEFT JOIN publish_runs AS p USING (run_id)
       WHERE r.pipeline = $1
         AND (r.state IN (${SUPERSEDED_FROM}) OR (r.state = 'completed' AND NOT ${runFinishedSql('r', 'p')}))
       ORDER BY r.started_at, r.run_id`,
      [pipeline],
    );
    return rows.map((r) => ({ runId: r.run_id, startedAt: new Date(r.started_at), state: r.state }));
  },

  /**
   * The run of `pipeline` that completed (its end steps done and published) while another
   * process waited for the warehouse, if any: the run that held it (`held`), or one that
   * finished at or after `since`.
   */
  async completedSince(wh: Warehouse, pipeline: string, since: Date, held: string | null): Promise<RunTimes | undefined> {
    const [r] = await wh.all<{ run_id: string; started_at: Date; finished_at: Date }>(
      `SELECT r.run_id, r.started_at, r.finished_at FROM runs AS r JOIN publish_runs AS p USING (run_id)
       WHERE r.pipeline = $1 AND r.state = 'completed' AND p.state = r.state AND p.finished_at = r.finished_at AND ${runFinishedSql('r', 'p')}
         AND (r.finished_at >= $2::TIMESTAMPTZ OR r.run_id IS NOT DISTINCT FROM $3)
       ORDER BY r.finished_at DESC LIMIT 1`,
      [pipeline, since.toISOString(), held],
    );
    return r && { runId: r.run_id, startedAt: new Date(r.started_at), finishedAt: new Date(r.finished_at) };
  },

  /** The latest run of the pipeline with a charged key that completed and finished (every step done, the lake included), started on `at`'s day in `timezone`. */
  async completedToday(wh: Warehouse, pipeline: string, timezone: string, at: Date): Promise<{ runId: string; startedAt: string } | undefined> {
    const [r] = await wh.all<{ runId: string; startedAt: string }>(
      `SELECT r.run_id AS "runId", strftime(r.started_at AT TIME ZONE $2, '%Y-%m-%d %H:%M') || ' ' || $2 AS "startedAt"
       FROM runs AS r LEFT JOIN publish_runs AS p USING (run_id)
       WHERE r.pipeline = $1 AND r.state = 'completed' AND coalesce(r.key_kind, '') <> 'sandbox' AND ${runFinishedSql('r', 'p')}
         AND (r.started_at AT TIME ZONE $2)::DATE = ($3::TIMESTAMPTZ AT TIME ZONE $2)::DATE
       ORDER BY r.started_at DESC LIMIT 1`,
      [pipeline, timezone, at.toISOString()],
    );
    return r;
  },

  /** When a run started, or null when the run is not known. */
  async runStartedAt(wh: Warehouse, runId: string): Promise<Date | null> {
    const [row] = await wh.all<{ started_at: Date | null }>(`select started_at from runs where run_id = $1`, [runId]);
    return row?.started_at ? new Date(row.started_at) : null;
  },

  /** The starts and states of a pipeline's runs, oldest first, but one (`exceptRunId`). */
  async runStarts(wh: Warehouse, pipeline: string, exceptRunId = ''): Promise<{ startedAt: Date; state: string }[]> {
    const rows = await wh.all<{ started_at: Date; state: string }>(
      `select started_at, state from runs where pipeline = $1 and run_id <> $2 and started_at is not null order by started_at`,
      [pipeline, exceptRunId],
    );
    return rows.map((r) => ({ startedAt: new Date(r.started_at), state: r.state }));
  },

  /** Tasks of a run still waiting to be collected, with their endpoint and job, optionally of one endpoint. */
  async pendingTasks(wh: Warehouse, runId: string, endpointId?: string): Promise<{ taskId: string; endpointId: string; job: string }[]> {
    const rows = await wh.all<{ task_id: string; endpoint_id: string; job: string }>(
      `SELECT task_id, endpoint_id, job FROM tasks WHERE run_id = $1 AND state = 'posted' AND task_id IS NOT NULL
         AND ($2::VARCHAR IS NULL OR endpoint_id = $2) ORDER BY task_id`,
      [runId, endpointId ?? null],
    );
    return rows.map((r) => ({ taskId: r.task_id, endpointId: r.endpoint_id, job: r.job }));
  },

  /** Endpoints of a run with tasks still waiting to be collected. */
  async waitingEndpointIds(wh: Warehouse, runId: string): Promise<string[]> {
    const rows = await wh.all<{ endpoint_id: string }>(`SELECT DISTINCT endpoint_id FROM tasks WHERE run_id = $1 AND state = 'posted' ORDER BY endpoint_id`, [runId]);
    return rows.map((r) => r.endpoint_id);
  },

  /** Tasks of a run whose POST outcome is not known. */
  async openTasks(wh: Warehouse, runId: string): Promise<OpenTask[]> {
    const rows = await wh.all<{ tag: string; endpoint_id: string; planned_at: Date; post_call_id: string | null }>(
      `SELECT tag, endpoint_id, planned_at, post_call_id FROM tasks WHERE run_id = $1 AND state IN ('planned', 'unknown') ORDER BY tag`,
      [runId],
    );
    return rows.map((r) => ({ tag: r.tag, endpointId: r.endpoint_id, plannedAt: new Date(r.planned_at), postCallId: r.post_call_id }));
  },

  /** Counts of a run's tasks per post endpoint (what progress lines show). */
  countsByEndpoint(wh: Warehouse, runId: string): Promise<EndpointCounts[]> {
    return wh.all<EndpointCounts>(
      `SELECT endpoint_id AS "endpointId", count(task_id)::INT AS posted,
              count(*) FILTER (WHERE state = 'collected')::INT AS collected,
              count(*) FILTER (WHERE state = 'failed' AND task_id IS NOT NULL)::INT AS failed,
              count(*) FILTER (WHERE state = 'posted' AND task_id IS NOT NULL)::INT AS pending
       FROM tasks WHERE run_id = $1 GROUP BY endpoint_id ORDER BY endpoint_id`,
      [runId],
    );
  },

  /** A run's `depth: auto` tasks: tag, service id, state and why their depth (tasks.depth_reason). */
  autoTasks(wh: Warehouse, runId: string): Promise<{ tag: string; task_id: string | null; state: TaskState; depth_reason: string }[]> {
    return wh.all(`SELECT tag, task_id, state, depth_reason FROM tasks WHERE run_id = $1 AND depth_reason IS NOT NULL ORDER BY tag`, [runId]);
  },

  /** Tasks of a run whose raw files were found damaged and that are still to be fetched again (task_refetches, setAsideDamaged). */
  async damagedRefetchesPending(wh: Warehouse, runId: string): Promise<number> {
    const [r] = await wh.all<{ n: number }>(
      `SELECT count(*)::INT AS n FROM task_refetches
       WHERE refetched_at IS NULL AND date_fixed LIKE 'raw damaged %' AND task_id IN (SELECT task_id FROM tasks WHERE run_id = $1)`,
      [runId],
    );
    return r?.n ?? 0;
  },

  /** Escalations per `auto:seen` task over a pipeline's past tasks (0 when it has none). */
  async escalationRate(wh: Warehouse, pipeline: string): Promise<number> {
    const [r] = await wh.all<{ seen: number; escalated: number }>(
      `SELECT count(*) FILTER (WHERE depth_reason = 'auto:seen')::INT AS seen, count(*) FILTER (WHERE depth_reason = 'auto:escalation')::INT AS escalated
       FROM tasks WHERE pipeline = $1 AND task_id IS NOT NULL`,
      [pipeline],
    );
    return r && r.seen > 0 ? r.escalated / r.seen : 0;
  },

  /** Every task of a run by tag, with its state. */
  async taskStates(wh: Warehouse, runId: string): Promise<Map<string, TaskState>> {
    const rows = await wh.all<{ tag: string; state: TaskState }>(`SELECT tag, state FROM tasks WHERE run_id = $1`, [runId]);
    return new Map(rows.map((r) => [r.tag, r.state]));
  },

  /**
   * A run's task figures: planned (the plan's count, RunStore.recordPlanSize, when more than the
   * tasks recorded: a run stopped before its last POST recorded only the batches it reached),
   * posted, failed, collected, pending and the rows loaded.
   */
  async taskTotals(wh: Warehouse, runId: string): Promise<Record<'planned' | 'posted' | 'failed' | 'collected' | 'pending' | 'rows_total', number>> {
    const [t] = await wh.all<Record<'planned' | 'posted' | 'failed' | 'collected' | 'pending' | 'rows_total', number>>(
      `SELECT greatest(count(*), coalesce((SELECT any_value(planned_tasks) FROM runs WHERE run_id = $1), 0))::INT AS planned,
              count(*) FILTER (WHERE task_id IS NOT NULL)::INT AS posted,
              count(*) FILTER (WHERE state = 'failed')::INT AS failed,
              count(*) FILTER (WHERE state = 'collected')::INT AS collected,
              count(*) FILTER (WHERE state = 'posted')::INT AS pending,
              coalesce(sum(rows_loaded), 0)::INT AS rows_total
       FROM tasks WHERE run_id = $1`,
      [runId],
    );
    return t!;
  },

  /** A run's tasks the service answered 40401 (Task Not Found) for after they were posted, with their keyword. */
  lostTasks(wh: Warehouse, runId: string): Promise<{ task_id: string; tag: string; keyword: string | null }[]> {
    return wh.all<{ task_id: string; tag: string; keyword: string | null }>(
      `SELECT task_id, tag, json_extract_string(spec, '$.keyword') AS keyword FROM tasks
       WHERE run_id = $1 AND state = 'failed' AND status_code = 40401 ORDER BY task_id`,
      [runId],
    );
  },

  /** How many of a run's tasks (by tag) have a POST with no ledger row at all. */
  async taggedWithoutLedgerRow(wh: Warehouse, runId: string, tags: readonly string[]): Promise<number> {
    if (tags.length === 0) return 0;
    const [u] = await wh.all<{ n: number }>(
      `SELECT count(*)::INT AS n FROM tasks AS t WHERE t.run_id = $1 AND t.tag IN (SELECT unnest(${sqlList(tags)}::VARCHAR[]))
         AND (t.post_call_id IS NULL OR NOT EXISTS (SELECT 1 FROM ledger AS l WHERE l.call_id = t.post_call_id))`,
      [runId],
    );
    return u?.n ?? 0;
  },

  /** A run's posted tasks whose answer is landed and parsed (in `raw_responses`), by id. */
  async postedWithLandedAnswer(wh: Warehouse, runId: string): Promise<string[]> {
    const rows = await wh.all<{ task_id: string }>(
      `SELECT DISTINCT t.task_id FROM tasks t
       JOIN (SELECT unnest(task_ids) AS id FROM raw_responses WHERE run_id = $1 AND parsed) r ON r.id = t.task_id
       WHERE t.run_id = $1 AND t.state = 'posted' ORDER BY t.task_id`,
      [runId],
    );
    return rows.map((r) => r.task_id);
  },

  /** Recent runs (newest first, at most `limit`), or one run, with their task and call figures (`pipeline status`). */
  recentRuns(wh: Warehouse, runId: string | null, limit: number): Promise<Record<string, unknown>[]> {
    return wh.all<Record<string, unknown>>(
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
      [runId, limit],
    );
  },
};
