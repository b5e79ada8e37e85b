import { taskFunctionOf, type Endpoint } from '../catalog/index.js';
import { isTaskId, type CallResult, type ServiceClient } from '../client/index.js';
import { totalCounts, type RunStore, type Warehouse } from '../warehouse/index.js';
import type { CollectCounts } from './collect-counts.js';
import { EtlError, isInterrupted } from '../errors.js';
import { fetchTasks } from './fetch-tasks.js';
import { refetchFixed } from './refetch-fixed.js';
import type { TaskLoader } from './load-batcher.js';

/** Where collection stands: the run's task counts and the calls still to make. */
export type PullProgress = CollectCounts;

export interface PullOptions {
  client: ServiceClient;
  wh: Warehouse;
  store: RunStore;
  /** task_post endpoints whose tasks are waiting: their `tasks_ready` lists are polled. */
  postEndpoints: readonly Endpoint[];
  pollIntervalMs: number;
  /** Give up waiting after this long; uncollected tasks stay resumable. */
  timeoutMs: number;
  /**
   * Fetch every waiting task directly once before polling. For tasks posted by an earlier
   * process: one fetched but not loaded (a crash, an error in its group) has left the ready
   * list for good, and only a direct `task_get` (free) finds it again.
   */
  sweep?: boolean;
  /**
   * After collecting, read the functions' `tasks_fixed` lists and fetch again the tasks of
   * ours that were re-parsed, replacing their rows (default true).
   */
  refetchFixed?: boolean;
  /** Aborting ends the wait between polls; tasks left stay posted in state. */
  signal?: AbortSignal;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  onProgress?: (p: PullProgress) => void;
  /** Loads fetched tasks on its own connection while the next ones are fetched. */
  loader: TaskLoader;
}

export interface PullResult {
  collected: number;
  failed: number;
  /** Re-parsed tasks fetched again (their rows replaced). */
  refetched: number;
  rowsLoaded: number;
  /** Tables that received rows, so only they need a new Parquet copy. */
  tables: Set<string>;
  /** Tasks still waiting when the timeout came. */
  pending: number;
  /** Landed files DuckDB read short as gzip, loaded again from plain text. */
  rereadPlain: string[];
  /** Re-parsed tasks fetched again whose new answer could not be loaded (RefetchResult.unloaded). */
  refetchUnloaded: { id: string; why: string }[];
}

/**
 * `task_get` calls kept going at once. The client's limiter spaces them within the
 * family's window; a few more than its in-flight cap keep it from ever waiting for the
 * next id, and few enough that an interrupt lets only these finish.
 */
const IN_FLIGHT = 16;

/** Least time between two progress reports (each counts the run's tasks in DuckDB). */
const PROGRESS_EVERY_MS = 1000;

/**
 * Pull collection: polls `tasks_ready` for the run's functions and fetches each ready task
 * of this run with `task_get/advanced/{id}`, a steady stream of calls within the rate
 * limit with no pause between groups. Each body was landed by the client before this code
 * sees it; the loader loads the rows with their collected marks, batch by batch, on its own
 * connection. A task fetched but not loaded is found again by the next run's sweep. Then
 * the re-parsed tasks `tasks_fixed` lists are fetched again (see {@link refetchFixed}).
 */
export async function collectByPull(o: PullOptions): Promise<PullResult> {
  const res: PullResult = {
    collected: 0,
    failed: 0,
    refetched: 0,
    rowsLoaded: 0,
    pending: 0,
    tables: new Set(),
    rereadPlain: [],
    refetchUnloaded: [],
  };
  try {
    await pullLoop(o, res);
  } finally {
    await settleLoader(o.loader, res);
  }
  if (o.refetchFixed !== false && !o.signal?.aborted && res.pending === 0) {
    const r = await refetchFixed(
      { client: o.client, wh: o.wh, runId: o.store.runId, postEndpoints: o.postEndpoints, now: o.now, signal: o.signal },
      (p) => {
        res.refetched = p.refetched;
      },
    );
    res.refetched = r.refetched;
    res.refetchUnloaded = r.unloaded;
    res.rowsLoaded += r.rowsLoaded;
    for (const t of r.tables) res.tables.add(t);
  }
  return res;
}

/** Adds what the loader loaded to the result; its failed loads end the collection as an error. */
async function settleLoader(loader: TaskLoader, res: PullResult): Promise<void> {
  await loader.idle();
  res.collected += loader.totals.collected;
  res.failed += loader.totals.failed;
  res.rowsLoaded += loader.totals.rowsLoaded;
  for (const t of loader.totals.tables) res.tables.add(t);
  res.rereadPlain.push(...loader.totals.rereadPlain);
  if (loader.totals.errors.length > 0) {
    throw new EtlError(
      'ETL_WAREHOUSE',
      `loading fetched tasks failed: ${loader.totals.errors[0]}; their bodies are landed, and the next run loads them`,
      { context: { stage: 'collect' } },
    );
  }
}

type TaskFunctions = Map<string, { ready: Endpoint; get: Endpoint }>;

async function pullLoop(o: PullOptions, res: PullResult): Promise<void> {
  // Collection stops at its deadline, in a pass too: what is left stays posted for the next run.
  const deadline = o.now().getTime() + o.timeoutMs;
  const past = () => o.now().getTime() >= deadline;
  const fns = taskFunctions(o.postEndpoints);
  const report = new PullReporter(o, res, fns);
  if (o.sweep) {
    const waiting = await o.store.pendingTasks();
    for (const [epId, fn] of fns) {
      await fetchAll(
        o,
        fn.get,
        waiting.filter((w) => w.endpointId === epId).map((w) => w.taskId),
        () => report.due(),
        past,
      );
    }
  }
  for (;;) {
    // Fetched and handed to the loader, not yet marked collected: not to be fetched again.
    const pending = new Set((await o.store.pendingTaskIds()).filter((id) => !o.loader.inFlight.isHanded(id)));
    res.pending = pending.size;
    report.ready = 0;
    await report.now();
    if (pending.size === 0) break;
    for (const fn of fns.values()) {
      const listed = await o.client.call(fn.ready);
      const ours = readyIds(listed).filter((id) => pending.has(id));
      report.ready = ours.length;
      if (report.ready > 0) report.emit();
      await fetchAll(
        o,
        fn.get,
        ours,
        async (id) => {
          pending.delete(id);
          res.pending = pending.size;
          report.ready--;
          await report.due();
        },
        past,
      );
    }
    if (pending.size === 0) continue;
    if (o.signal?.aborted || past()) return;
    // Never sleeps past the deadline; a poll due after it is not made.
    await o.sleep(Math.min(o.pollIntervalMs, deadline - o.now().getTime()));
    if (past()) return;
  }
}

/** The `tasks_ready` and `task_get` endpoints of each `task_post` endpoint, by its id. */
function taskFunctions(postEndpoints: readonly Endpoint[]): TaskFunctions {
  const fns: TaskFunctions = new Map();
  for (const e of postEndpoints) {
    const fn = taskFunctionOf(e);
    if (!fn) throw new Error(`${e.id} has no tasks_ready and task_get in the catalog`);
    fns.set(e.id, fn);
  }
  return fns;
}

/** A pull's progress reports: the counts at each pass, and while fetching at most one every PROGRESS_EVERY_MS. */
class PullReporter {
  /** Tasks listed ready in the current `tasks_ready` answer and not fetched yet. */
  ready = 0;
  private counts: Omit<PullProgress, 'ready' | 'refetched'> | undefined;
  private last = Number.NEGATIVE_INFINITY;
  private reporting = false;

  constructor(
    private readonly o: PullOptions,
    private readonly res: PullResult,
    private readonly fns: TaskFunctions,
  ) {}

  /** Reports the last counts with the ready tasks now. */
  emit(): void {
    if (this.counts) this.o.onProgress?.({ ...this.counts, ready: this.ready, refetched: this.res.refetched });
  }

  /** Reads the counts again and reports them. */
  async now(): Promise<void> {
    if (!this.o.onProgress) return;
    this.last = this.o.now().getTime();
    const rows = await this.o.store.countsByEndpoint();
    const callsLeft = rows.flatMap((r) => {
      const get = this.fns.get(r.endpointId)?.get;
      return get && r.pending > 0 ? [{ family: get.family, calls: r.pending }] : [];
    });
    this.counts = { ...totalCounts(rows), callsLeft };
    this.emit();
  }

  /** While fetching: a report when one is due, made by whichever call gets here first. */
  async due(): Promise<void> {
    if (this.reporting || this.o.now().getTime() - this.last < PROGRESS_EVERY_MS) return;
    this.reporting = true;
    try {
      await this.now();
    } finally {
      this.reporting = false;
    }
  }
}

/**
 * task_get calls failed in a row, with no task fetched between them, after which a pass stops
 * taking new ids: the service is failing, not one task.
 */
const FAILED_IN_A_ROW = 3;

/**
 * Whether a pass goes on past a task whose `task_get` failed after the client's retries: a 5xx
 * or no answer for one task (the service failing to build that one result) must not keep the
 * night's other paid results from being fetched. A refused key, the rate limiter or anything
 * else stops the pass at once.
 */
function pastOne(err: unknown): boolean {
  return err instanceof EtlError && (err.code === 'ETL_SERVICE_UNAVAILABLE' || err.code === 'ETL_TIMEOUT');
}

/**
 * Fetches tasks with `task_get` (free), {@link IN_FLIGHT} at a time, handing each to the
 * loader as it comes (the client landed its body first). A task whose call keeps failing
 * (pastOne) is left posted and the others are fetched; then the pass fails with what it left,
 * and the next run fetches those again. The pass stops taking new ids when the run is aborted,
 * at the collection deadline (`past`), when {@link FAILED_IN_A_ROW} calls fail in a row, or at
 * any other failure; the calls under way finish first.
 */
async function fetchAll(
  o: PullOptions,
  get: Endpoint,
  ids: readonly string[],
  onEach: (id: string) => Promise<void>,
  past: () => boolean,
): Promise<void> {
  let next = 0;
  // A failed hand-off to the loader ends the pass with its own error; failed calls are `left`.
  let loadFailure: { err: unknown } | undefined;
  let stopped = false;
  const left: { id: string; err: unknown }[] = [];
  let fetched = 0;
  let failedInARow = 0;
  const worker = async () => {
    while (next < ids.length && !o.signal?.aborted && !stopped && !past()) {
      const id = ids[next++]!;
      const got = await fetchTasks(o.client, get, [id], o.signal);
      for (const f of got.failed) o.loader.failed(f.id, f.statusCode, f.message);
      for (const t of got.done) o.loader.fetched(t.id!);
      // Interrupted while waiting for the rate limit: not sent, the task stays posted, and the pass ends (aborted).
      if (isInterrupted(got.failure)) continue;
      if (got.failure !== undefined) {
        left.push({ id, err: got.failure });
        if (!pastOne(got.failure) || ++failedInARow >= FAILED_IN_A_ROW) stopped = true;
        continue;
      }
      failedInARow = 0;
      fetched++;
      try {
        await onEach(id);
      } catch (err) {
        loadFailure ??= { err };
        stopped = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, ids.length) }, worker));
  if (loadFailure) throw loadFailure.err;
  const first = left[0];
  if (!first) return;
  if (left.length === 1 && fetched === 0) throw first.err;
  const why = first.err instanceof Error ? first.err.message : String(first.err);
  const message =
    `task_get failed for ${left.length} task(s) (${left
      .slice(0, 3)
      .map((l) => l.id)
      .join(', ')}${left.length > 3 ? ', ...' : ''}), which stay posted; ` +
    `${fetched} other task(s) of this pass were fetched${stopped ? ', and the pass stopped there' : ''}. First failure: ${why}`;
  throw first.err instanceof EtlError ? new EtlError(first.err.code, message, { cause: first.err, context: first.err.context }) : first.err;
}

function readyIds(call: CallResult): string[] {
  const ids: string[] = [];
  for (const t of call.envelope.tasks ?? []) {
    for (const r of t.result ?? []) {
      const id = (r as { id?: unknown } | null)?.id;
      if (isTaskId(id)) ids.push(id); // anything else is not a task of ours to fetch
    }
  }
  return ids;
}
