import { endpoint, type Endpoint } from '../catalog/index.js';
import type { CallResult, ServiceClient } from '../client/index.js';
import { loadIdempotent, normalizeSerpTask, serpItemsTable, serpResultsTable, type RunStore, type Warehouse } from '../warehouse/index.js';

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

/** Task codes that mean "not done yet, ask again later". */
const NOT_READY = new Set([40601, 40602]);

/**
 * Pull collection: polls `tasks_ready` for the run's functions, fetches each ready task of
 * this run with `task_get/advanced/{id}`, and loads its rows with the task's collected mark
 * in one transaction. The body was landed by the client before this code sees it.
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
      for (const id of readyIds(ready)) {
        if (!pending.has(id)) continue;
        await collectOne(o, fn.get, id, res);
        pending.delete(id);
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

async function collectOne(o: PullOptions, get: Endpoint, id: string, res: PullResult): Promise<void> {
  const call = await o.client.call(get, { taskId: id });
  const task = call.envelope.tasks?.[0];
  const verdict = call.outcome.tasks[0];
  if (!task || !verdict) return;
  if (!verdict.ok) {
    if (NOT_READY.has(verdict.statusCode)) return;
    await o.store.markFailed(id, verdict.statusCode, verdict.message);
    res.failed++;
    return;
  }
  const { results, items } = normalizeSerpTask(task, { runId: o.store.runId });
  const rows = await loadIdempotent(
    o.wh,
    [
      { spec: serpResultsTable, table: results },
      { spec: serpItemsTable, table: items },
    ],
    async () => o.store.markCollected(id, results.numRows + items.numRows, o.now()),
  );
  res.collected++;
  res.rowsLoaded += rows;
}
