import { taskFunctionOf, type Endpoint } from '../catalog/index.js';
import { EtlError } from '../errors.js';
import type { CallResult, EnvelopeTask, ServiceClient } from '../client/index.js';
import { loadLanded, type RunStore, type Warehouse } from '../warehouse/index.js';
import type { TaskLoader } from './task-loader.js';

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
  /** Aborting ends the wait between polls; tasks left stay posted in state. */
  signal?: AbortSignal;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  onProgress?: (p: { collected: number; failed: number; pending: number }) => void;
  /**
   * Loads fetched tasks on its own connection while the next ones are fetched. Without
   * it, each group is loaded before the next is fetched, and the rate-limit slots wait.
   */
  loader?: TaskLoader;
}

export interface PullResult {
  collected: number;
  failed: number;
  rowsLoaded: number;
  /** Tables that received rows, so only they need a new Parquet copy. */
  tables: Set<string>;
  /** Tasks still waiting when the timeout came. */
  pending: number;
}

/** Ready tasks fetched before their rows are loaded together. */
const GROUP = 50;

/** Task codes that mean "not done yet, ask again later". */
const NOT_READY = new Set([40601, 40602]);

/**
 * Pull collection: polls `tasks_ready` for the run's functions, fetches each ready task of
 * this run with `task_get/advanced/{id}`, and loads the rows of a group of tasks with their
 * collected marks in one transaction. Each body was landed by the client before this code
 * sees it; a task fetched but not loaded is found again by the next run's sweep.
 */
export async function collectByPull(o: PullOptions): Promise<PullResult> {
  const res: PullResult = { collected: 0, failed: 0, rowsLoaded: 0, pending: 0, tables: new Set() };
  try {
    return await pullLoop(o, res);
  } finally {
    if (o.loader) await settleLoader(o.loader, res);
  }
}

/** Adds what the loader loaded to the result; its failed loads end the collection as an error. */
async function settleLoader(loader: TaskLoader, res: PullResult): Promise<void> {
  await loader.idle();
  res.collected += loader.totals.collected;
  res.failed += loader.totals.failed;
  res.rowsLoaded += loader.totals.rowsLoaded;
  for (const t of loader.totals.tables) res.tables.add(t);
  if (loader.totals.errors.length > 0) {
    throw new EtlError('ETL_WAREHOUSE', `loading fetched tasks failed: ${loader.totals.errors[0]}; their bodies are landed, and the next run loads them`, { context: { stage: 'collect' } });
  }
}

async function pullLoop(o: PullOptions, res: PullResult): Promise<PullResult> {
  const started = o.now().getTime();
  const progress = (pending: number) =>
    o.onProgress?.({ collected: res.collected + (o.loader?.totals.collected ?? 0), failed: res.failed + (o.loader?.totals.failed ?? 0), pending });
  const fns = new Map<string, { ready: Endpoint; get: Endpoint }>();
  for (const e of o.postEndpoints) {
    const fn = taskFunctionOf(e);
    if (!fn) throw new Error(`${e.id} has no tasks_ready and task_get in the catalog`);
    fns.set(e.id, fn);
  }
  if (o.sweep) {
    const waiting = await o.wh.all<{ task_id: string; endpoint_id: string }>(
      `SELECT task_id, endpoint_id FROM tasks WHERE run_id = $1 AND state = 'posted' AND task_id IS NOT NULL ORDER BY task_id`,
      [o.store.runId],
    );
    for (const [epId, fn] of fns) {
      const ids = waiting.filter((w) => w.endpoint_id === epId).map((w) => w.task_id);
      for (let i = 0; i < ids.length && !o.signal?.aborted; i += GROUP) await collectGroup(o, fn.get, ids.slice(i, i + GROUP), res);
    }
  }
  for (;;) {
    const pending = new Set(await o.store.pendingTaskIds());
    for (const id of o.loader?.handed ?? []) pending.delete(id);
    res.pending = pending.size;
    progress(pending.size);
    if (pending.size === 0) return res;
    for (const fn of fns.values()) {
      const ready = await o.client.call(fn.ready);
      const ours = readyIds(ready).filter((id) => pending.has(id));
      for (let i = 0; i < ours.length && !o.signal?.aborted; i += GROUP) {
        const group = ours.slice(i, i + GROUP);
        await collectGroup(o, fn.get, group, res);
        for (const id of group) pending.delete(id);
        res.pending = pending.size;
        progress(pending.size);
      }
    }
    if (pending.size === 0) continue;
    if (o.signal?.aborted || o.now().getTime() - started >= o.timeoutMs) return res;
    await o.sleep(o.pollIntervalMs);
  }
}

function readyIds(call: CallResult): string[] {
  const ids: string[] = [];
  for (const t of call.envelope.tasks ?? []) {
    for (const r of t.result ?? []) {
      const id = (r as { id?: unknown } | null)?.id;
      if (typeof id === 'string') ids.push(id);
    }
  }
  return ids;
}

/**
 * Fetches a group of ready tasks at once (the client's limiter keeps them within the
 * family's rate and concurrency; each body is landed as it arrives), then loads all their
 * rows and their collected marks in one transaction (a commit per task would cost more
 * than the rows themselves), or hands them to the loader and moves on.
 */
async function collectGroup(o: PullOptions, get: Endpoint, ids: readonly string[], res: PullResult): Promise<void> {
  const done: EnvelopeTask[] = [];
  let failure: unknown;
  const calls = await Promise.allSettled(ids.map((id) => o.client.call(get, { taskId: id })));
  for (const [i, settled] of calls.entries()) {
    const id = ids[i]!;
    if (settled.status === 'rejected') {
      failure ??= settled.reason; // load what was fetched, then report the error
      continue;
    }
    const task = settled.value.envelope.tasks?.[0];
    const verdict = settled.value.outcome.tasks[0];
    if (!task || !verdict || NOT_READY.has(verdict.statusCode)) continue;
    if (!verdict.ok) {
      if (o.loader) {
        o.loader.failed(id, verdict.statusCode, verdict.message);
      } else {
        await o.store.markFailed(id, verdict.statusCode, verdict.message);
        res.failed++;
      }
      continue;
    }
    if (o.loader) o.loader.fetched(task.id ?? id);
    else done.push({ ...task, id: task.id ?? id });
  }
  if (done.length > 0) await loadGroup(o, done, res);
  if (failure !== undefined) throw failure;
}

/** Loads the group's rows from the landed bodies (DuckDB reads the raw files) with their collected marks. */
async function loadGroup(o: PullOptions, done: EnvelopeTask[], res: PullResult): Promise<void> {
  const at = o.now();
  const report = await loadLanded(o.wh, { taskIds: done.map((t) => t.id!) }, async (loaded) => {
    for (const t of done) await o.store.markCollected(t.id!, loaded.perTask.get(t.id!) ?? 0, at);
  });
  for (const [table, n] of report.rows) {
    res.rowsLoaded += n;
    if (n > 0) res.tables.add(table);
  }
  res.collected += done.length;
}
