/**
 * The life of a run and of its tasks, as data: the one list of states and the one table of
 * legal moves. `RunStore` (the only writer of `runs` and `tasks`) makes every UPDATE's
 * guard from these tables, the schema doc names the states from them, and a unit test holds
 * the `accepted_values` test of `sql/staging/stg_pipeline__tasks.yml` to them.
 * `docs/lifecycle.md` draws the machine.
 */

/** Task states in the `tasks` table, and what a resumed run does with each. */
export const TASK_STATES = [
  /** Written before its POST; the POST's outcome is not known yet (a crash, a timeout): looked up by tag. */
  'planned',
  /** The POST never reached the service (no connection, 402, repeated 429): safe to post again. */
  'unsent',
  /** The POST was sent but its answer never came: looked up by tag, never re-posted blindly. */
  'unknown',
  /** The service created it (it has an id): collected by pull, push, crawl watch or the live answer. */
  'posted',
  /** The service refused it, or answered an error for it at collection: not retried. */
  'failed',
  /** Its rows are loaded (in the transaction that set this state). */
  'collected',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** Run states in the `runs` table. */
export const RUN_STATES = [
  /** Working now, or crashed (the next run of the pipeline resumes it). */
  'running',
  /**
   * Every task collected (or failed) and loaded. Finished once the publish after its loads has
   * committed its row (`publish_runs`); until then (killed in the models, alerts or publish) the
   * next run of the pipeline, within 12 hours of its start, finishes those steps and buys nothing.
   */
  'completed',
  /** Stopped early (budget, balance, unavailable, interrupted, results not ready): resumed by the next run. */
  'partial',
  /** Ended by an error after tasks may have been bought: settled by the next run. */
  'failed',
  /** Settled by a later run: everything it posted is collected or resolved. */
  'superseded',
] as const;
export type RunState = (typeof RUN_STATES)[number];

/**
 * The steps of a run, in order, as its journal (`run_steps`) names them. A run is finished when
 * every one is done (or skipped), the lake included: the last is `lake`.
 */
export const RUN_STEPS = ['ingest', 'clusters', 'models', 'alerts', 'publish', 'summary', 'checkpoint', 'lake'] as const;
export type RunStep = (typeof RUN_STEPS)[number];

/**
 * Legal task moves: from a state to the states it may become. A move to the same state
 * (`collected` → `collected`) is a re-load that replaces rows (a re-parse, a reload). A
 * task leaves the table only from `unsent` (forgotten, to be planned and posted again).
 */
export const TASK_MOVES: Readonly<Record<TaskState, readonly TaskState[]>> = {
  planned: ['posted', 'failed', 'unsent', 'unknown'],
  unknown: ['posted', 'failed', 'unsent', 'unknown'],
  unsent: [],
  posted: ['collected', 'failed'],
  failed: [],
  collected: ['collected'],
};

/** Legal run moves (`running` is entered by `startRun` and re-entered by `reopenRun`). */
export const RUN_MOVES: Readonly<Record<RunState, readonly RunState[]>> = {
  /** A crashed run is still `running`: it is reopened (resumed) or superseded (settled) by the next run. */
  running: ['running', 'completed', 'partial', 'failed', 'superseded'],
  partial: ['running', 'superseded'],
  failed: ['running', 'superseded'],
  completed: [],
  superseded: [],
};

/** The states a task may be in to move to `to`: the guard of that move's UPDATE. */
export function taskStatesInto(to: TaskState): TaskState[] {
  return TASK_STATES.filter((from) => TASK_MOVES[from].includes(to));
}

/** The states a run may be in to move to `to`. */
export function runStatesInto(to: RunState): RunState[] {
  return RUN_STATES.filter((from) => RUN_MOVES[from].includes(to));
}

/** `'a', 'b'` for an SQL `IN (...)`; the states are constants of this module, never input. */
export function sqlStates(states: readonly string[]): string {
  return states.map((s) => `'${s}'`).join(', ');
}
