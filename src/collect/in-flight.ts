import type { Endpoint } from '../catalog/index.js';
import type { TaskState } from '../warehouse/index.js';

/**
 * Where a task this process handles is, between its POST and its load, and the state its
 * row in `tasks` has meanwhile. Every in-process state is one of the database's (a unit test
 * holds each move here to a legal move of `TASK_MOVES`, or to none), so what a crash leaves
 * in the table is always what the process last knew: a task is `landed` in memory but
 * `posted` in the table until its load commits, and the next run fetches or loads it again.
 */
export const IN_FLIGHT_STATES = {
  /** Its POST is under way: a tag without an id. */
  sending: 'planned',
  /** The service gave it an id; its row says so once `recorded`. */
  posted: 'posted',
  /** Pinged, or its callbacks keep failing: to be fetched with task_get. */
  fetch_due: 'posted',
  /** Its body is landed (a postback, or a fetch) and handed to the loader; not loaded yet. */
  landed: 'posted',
  /** Its load failed: left for pull, or for the next run, which loads it from the landing. */
  load_failed: 'posted',
  /** Loaded, in the transaction that set the row's state. */
  collected: 'collected',
  /** The service answered an error for it at collection. */
  failed: 'failed',
} as const satisfies Record<string, TaskState>;
export type InFlightState = keyof typeof IN_FLIGHT_STATES;

/** Legal in-process moves. A task leaves `sending` without an id when its POST fails (it is dropped). */
export const IN_FLIGHT_MOVES: Readonly<Record<InFlightState, readonly InFlightState[]>> = {
  sending: ['posted'],
  posted: ['fetch_due', 'landed'],
  fetch_due: ['fetch_due', 'landed'],
  // A second body for a task whose first is not loaded yet (a resent postback) is landed again.
  landed: ['landed', 'collected', 'failed', 'load_failed'],
  load_failed: ['landed'],
  collected: [],
  failed: [],
};

/** One task in flight. */
export interface InFlightTask {
  taskId: string;
  /** Its tag, when this process posted it. */
  tag: string | null;
  /** The `task_get` endpoint of its function, when known: where a postback's body would have come from. */
  get: Endpoint | null;
  /** What a postback's `data` must echo (task-echo.ts), when this process posted it. */
  echo?: string | null;
  state: InFlightState;
  /** Its row in `tasks` is committed with its id (until then the row is `planned`, and a load must wait). */
  recorded: boolean;
  /** Callback failures already acted on (resent, or queued for a fetch). */
  callbackFailures: number;
  /** Times the service was asked to send its callback again. */
  resends: number;
}

/**
 * The one registry of the tasks a collection handles in this process: the ids the callback
 * server may accept (and the tags of POSTs still in flight, whose ids are about to come), what
 * the loader holds, what is due for a fetch, and what is settled. Push, pull and the loader
 * read and move tasks here; the database is written by `RunStore` and the loader alone.
 */
export class InFlight {
  readonly #byId = new Map<string, InFlightTask>();
  readonly #sending = new Map<string, { get: Endpoint | null; echo: string | null }>();
  readonly #counts = new Map<InFlightState, number>();
  /** Ids with an id and no committed row yet: only the tasks of POSTs being recorded, so few. */
  readonly #unrecorded = new Set<string>();
  #waiters: Array<() => void> = [];
  #onRecorded: (ids: readonly string[]) => void = () => {};

  /** Called with the ids whose task rows now exist (the loader may load them). */
  set onRecorded(fn: (ids: readonly string[]) => void) {
    this.#onRecorded = fn;
  }

  /** Tags of a POST about to be sent (with `get`, the task_get endpoint of their function). */
  sending(tags: readonly string[], get: Endpoint | null, echoes?: readonly (string | null)[]): void {
    for (const [i, t] of tags.entries()) this.#sending.set(t, { get, echo: echoes?.[i] ?? null });
  }

  /** The POST answered: these tags have ids now. Tags without a row here were not created. */
  answered(tags: readonly string[], rows: readonly { tag: string; taskId: string | null }[]): void {
    for (const r of rows) {
      if (!this.#sending.has(r.tag) || !r.taskId) continue;
      const sent = this.#sending.get(r.tag)!;
      this.#add({ taskId: r.taskId, tag: r.tag, get: sent.get, echo: sent.echo, state: 'posted', recorded: false });
    }
    for (const t of tags) this.#sending.delete(t);
    this.#wake();
  }

  /** The POST failed without an answer: none of its tags will get an id from it. */
  abandoned(tags: readonly string[]): void {
    for (const t of tags) this.#sending.delete(t);
    this.#wake();
  }

  /** The ids' rows are committed in the tasks table. */
  recorded(ids: readonly string[]): void {
    const done: string[] = [];
    for (const id of ids) {
      const t = this.#byId.get(id);
      if (t && !t.recorded) {
        t.recorded = true;
        this.#unrecorded.delete(id);
        done.push(id);
      }
    }
    if (done.length > 0) this.#onRecorded(done);
  }

  /**
   * Moves a task. A task not known yet (one of the run's posted tasks that pull fetched) is
   * taken in as `posted` and recorded: its row is in the table, or pull would not have it.
   * An illegal move throws: it is a bug, and the state would no longer line up with the table.
   */
  move(taskId: string, to: InFlightState): InFlightTask {
    const t = this.#byId.get(taskId) ?? this.#add({ taskId, tag: null, get: null, state: 'posted', recorded: true });
    if (!IN_FLIGHT_MOVES[t.state].includes(to)) throw new Error(`task ${taskId} cannot move from ${t.state} to ${to} in this process`);
    this.#count(t.state, -1);
    t.state = to;
    this.#count(to, 1);
    return t;
  }

  get(taskId: string): InFlightTask | undefined {
    return this.#byId.get(taskId);
  }

  /** Loaded or failed: a repeated callback is acknowledged without landing it again, a due fetch dropped. */
  isSettled(taskId: string): boolean {
    const s = this.#byId.get(taskId)?.state;
    return s === 'collected' || s === 'failed';
  }

  /** Handed to the loader at some point (landed, loaded, failed, or its load failed): not to be fetched again by pull. */
  isHanded(taskId: string): boolean {
    const s = this.#byId.get(taskId)?.state;
    return s !== undefined && s !== 'posted' && s !== 'fetch_due';
  }

  /** The tasks in these states. */
  inState(...states: InFlightState[]): InFlightTask[] {
    return [...this.#byId.values()].filter((t) => states.includes(t.state));
  }

  /** How many tasks are in the state. */
  count(state: InFlightState): number {
    return this.#counts.get(state) ?? 0;
  }

  /** Recorded tasks still to come: neither loaded, failed, nor given up by the loader. */
  outstanding(): InFlightTask[] {
    return [...this.#byId.values()].filter((t) => t.recorded && (t.state === 'posted' || t.state === 'fetch_due' || t.state === 'landed'));
  }

  /**
   * How many {@link outstanding} tasks there are, and how many of them are landed, from the
   * counts by state: a waiting loop asks many times a second, and a night has 100,000 tasks.
   */
  outstandingCounts(): { outstanding: number; landed: number } {
    let unrecordedOut = 0;
    let unrecordedLanded = 0;
    for (const id of this.#unrecorded) {
      const s = this.#byId.get(id)!.state;
      if (s === 'posted' || s === 'fetch_due' || s === 'landed') unrecordedOut++;
      if (s === 'landed') unrecordedLanded++;
    }
    const out = this.count('posted') + this.count('fetch_due') + this.count('landed') - unrecordedOut;
    return { outstanding: out, landed: this.count('landed') - unrecordedLanded };
  }

  get size(): number {
    return this.#byId.size;
  }

  /**
   * The task with this id, if this process posted it. When the id is unknown but `tag`
   * belongs to a POST still in flight, waits up to `waitMs` for that POST's answer.
   */
  async find(taskId: string, tag: string | null, waitMs: number): Promise<InFlightTask | undefined> {
    const until = Date.now() + waitMs;
    for (;;) {
      const t = this.#byId.get(taskId);
      if (t || tag === null || !this.#sending.has(tag) || Date.now() >= until) return t;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, until - Date.now()));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  #add(t: Omit<InFlightTask, 'callbackFailures' | 'resends'>): InFlightTask {
    // Each field named, not spread: V8 gives every object made by a spread a shape (map) of its
    // own, about 300 bytes more for each of a night's 100,000 tasks, kept until the night ends.
    const task: InFlightTask = {
      taskId: t.taskId,
      tag: t.tag,
      get: t.get,
      echo: t.echo,
      state: t.state,
      recorded: t.recorded,
      callbackFailures: 0,
      resends: 0,
    };
    this.#byId.set(t.taskId, task);
    if (!t.recorded) this.#unrecorded.add(t.taskId);
    this.#count(t.state, 1);
    return task;
  }

  #count(s: InFlightState, d: number): void {
    this.#counts.set(s, (this.#counts.get(s) ?? 0) + d);
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}
