import { endpoint, type Endpoint } from '../catalog/index.js';
import type { CallResult, EnvelopeTask, ServiceClient } from '../client/index.js';
import { loadLanded, type RunStore, type Warehouse } from '../warehouse/index.js';

export interface PullOptions {
  client: ServiceClient;
  wh: Warehouse;
  store: RunStore;
  /** task_post endpoints used by the run: their `tasks_ready` lists are polled. */
  postEndpoints: readonly Endpoint[];
  pollIntervalMs: number;
  /** Give up waiting after this long; uncollected tasks stay resumable. */
  timeoutMs: number;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  onProgress?: (p: { collected: number; failed: number; pending: number }) => void;
}

export interface PullResult {
  collected: number;
  failed: number;
  rowsLoaded: number;
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
 * sees it, so a crash between fetch and load loses nothing that was paid for.
 */
export async function collectByPull(o: PullOptions): Promise<PullResult> {
  const started = o.now().getTime();
  const res: PullResult = { collected: 0, failed: 0, rowsLoaded: 0, pending: 0 };
  const readyEndpoints = [...new Set(o.postEndpoints.map((e) => e.id.replace(/\.task_post$/, '')))].map((fn) => ({
    ready: endpoint(`${fn}.tasks_ready`),
    get: endpoint(`${fn}.task_get.advanced`),
  }));
  for (;;) {
    const pending = new Set(await o.store.pendingTaskIds());
    res.pending = pending.size;
    o.onProgress?.({ collected: res.collected, failed: res.failed, pending: pending.size });
    if (pending.size === 0) return res;
    for (const fn of readyEndpoints) {
      const ready = await o.client.call(fn.ready);
      const ours = readyIds(ready).filter((id) => pending.has(id));
      for (let i = 0; i < ours.length; i += GROUP) {
        const group = ours.slice(i, i + GROUP);
        await collectGroup(o, fn.get, group, res);
        for (const id of group) pending.delete(id);
        res.pending = pending.size;
        o.onProgress?.({ collected: res.collected, failed: res.failed, pending: pending.size });
      }
    }
    if (pending.size === 0) continue;
    if (o.now().getTime() - started >= o.timeoutMs) return res;
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
 * Fetches a group of ready tasks (each body landed by the client as it arrives), then loads
 * all their rows and their collected marks in one transaction: a commit per task would
 * cost more than the rows themselves.
 */
async function collectGroup(o: PullOptions, get: Endpoint, ids: readonly string[], res: PullResult): Promise<void> {
  const done: EnvelopeTask[] = [];
  for (const id of ids) {
    const call = await o.client.call(get, { taskId: id });
    const task = call.envelope.tasks?.[0];
    const verdict = call.outcome.tasks[0];
    if (!task || !verdict || NOT_READY.has(verdict.statusCode)) continue;
    if (!verdict.ok) {
      await o.store.markFailed(id, verdict.statusCode, verdict.message);
      res.failed++;
      continue;
    }
    done.push({ ...task, id: task.id ?? id });
  }
  if (done.length === 0) return;
  // The bodies were landed by the client; DuckDB reads them from the raw files.
  const at = o.now();
  const report = await loadLanded(o.wh, { taskIds: done.map((t) => t.id!) }, async (loaded) => {
    for (const t of done) await o.store.markCollected(t.id!, loaded.perTask.get(t.id!) ?? 0, at);
  });
  for (const n of report.rows.values()) res.rowsLoaded += n;
  res.collected += done.length;
}
