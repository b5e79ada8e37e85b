import { ENDPOINTS, taskFunctionOf, type Endpoint } from '../catalog/index.js';
import type { CallResult, ServiceClient } from '../client/index.js';
import { loadLanded, RunStore, type LoadReport, type Warehouse } from '../warehouse/index.js';
import { fetchTasks } from './fetch-tasks.js';
import { unloadedWhy } from './load-landed-tasks.js';

export interface RefetchOptions {
  client: ServiceClient;
  wh: Warehouse;
  /** The run that fetches: its id goes on the refetch rows (its raw bodies and ledger rows carry it too). */
  runId: string;
  /** task_post endpoints whose `tasks_fixed` lists are read (functions without one are skipped). */
  postEndpoints: readonly Endpoint[];
  now: () => Date;
  signal?: AbortSignal;
}

export interface RefetchResult {
  /** Re-parsed tasks whose new rows replaced the old ones. */
  refetched: number;
  /** Re-parsed tasks the service now answers with an error (recorded, not tried again). */
  failed: number;
  rowsLoaded: number;
  tables: Set<string>;
  /**
   * Re-parsed tasks fetched again whose new answer landed but could not be loaded (its raw
   * file unreadable), and why: their old rows stay, their refetch row stays open, and the next
   * run fetches them again (`task_get` is free).
   */
  unloaded: { id: string; why: string }[];
}

/** Re-parsed tasks fetched before their rows are loaded together. */
const GROUP = 50;

/**
 * Fetches again the tasks of ours that `tasks_fixed` lists as re-parsed, and replaces their
 * rows. Each listing is first written to `task_refetches` (task id and `date_fixed`), so a
 * re-parse is fetched once, and a fetch a crash interrupted (the service then lists the task
 * no more) is finished by the next call from the row alone. The load is by task id and keeps
 * the task's newest response, so the old rows are replaced, never added to; the refetch row
 * is completed in the same transaction. Only tasks already collected are refetched: a task
 * still waiting is collected by the normal pull, which gets the fixed result anyway.
 */
export async function refetchFixed(o: RefetchOptions, onProgress?: (r: RefetchResult) => void): Promise<RefetchResult> {
  const res: RefetchResult = { refetched: 0, failed: 0, rowsLoaded: 0, tables: new Set(), unloaded: [] };
  for (const post of o.postEndpoints) {
    const list = fixedListOf(post);
    if (!list || o.signal?.aborted) continue;
    const records = fixedRecords(await o.client.call(list));
    if (records.length > 0 && (await recordListed(o, records)) > 0) res.tables.add('task_refetches');
  }
  const todo = await o.wh.all<{ task_id: string; endpoint_id: string }>(
    `SELECT DISTINCT task_id, endpoint_id FROM task_refetches WHERE refetched_at IS NULL ORDER BY endpoint_id, task_id`,
  );
  for (const endpointId of new Set(todo.map((t) => t.endpoint_id))) {
    const get = getterOf(endpointId);
    const ids = todo.filter((t) => t.endpoint_id === endpointId).map((t) => t.task_id);
    if (!get) continue;
    for (let i = 0; i < ids.length && !o.signal?.aborted; i += GROUP) {
      await refetchGroup(o, get, ids.slice(i, i + GROUP), res);
      onProgress?.(res);
    }
  }
  return res;
}

/** `serp.engA.organic.tasks_fixed` for `serp.engA.organic.task_post`; undefined where the function has none. */
export function fixedListOf(post: Endpoint): Endpoint | undefined {
  const id = post.id.replace(/\.task_post$/, '.tasks_fixed');
  return id === post.id ? undefined : ENDPOINTS.find((e) => e.id === id);
}

function getterOf(postId: string): Endpoint | undefined {
  const post = ENDPOINTS.find((e) => e.id === postId);
  return post ? taskFunctionOf(post)?.get : undefined;
}

function fixedRecords(call: CallResult): { id: string; dateFixed: string }[] {
  const out: { id: string; dateFixed: string }[] = [];
  for (const t of call.envelope.tasks ?? []) {
    for (const r of t.result ?? []) {
      const rec = r as { id?: unknown; date_fixed?: unknown } | null;
      if (typeof rec?.id === 'string') out.push({ id: rec.id, dateFixed: typeof rec.date_fixed === 'string' ? rec.date_fixed : '' });
    }
  }
  return out;
}

/** Writes the listed re-parses of our collected tasks not seen before; returns how many. */
async function recordListed(o: RefetchOptions, records: { id: string; dateFixed: string }[]): Promise<number> {
  const values = records.map((r) => `(${lit(r.id)}, ${lit(r.dateFixed)})`).join(', ');
  const before = await countRows(o.wh);
  await o.wh.run(
    `INSERT INTO task_refetches (task_id, date_fixed, endpoint_id, listed_at)
     SELECT DISTINCT f.id, f.date_fixed, t.endpoint_id, $1::TIMESTAMPTZ
     FROM (VALUES ${values}) AS f(id, date_fixed) JOIN tasks t ON t.task_id = f.id AND t.state = 'collected'
     WHERE NOT EXISTS (SELECT 1 FROM task_refetches r WHERE r.task_id = f.id AND r.date_fixed = f.date_fixed)`,
    [o.now().toISOString()],
  );
  return (await countRows(o.wh)) - before;
}

async function countRows(wh: Warehouse): Promise<number> {
  const [r] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM task_refetches`);
  return r?.n ?? 0;
}

/** Fetches a group again, then loads the new rows (replacing the old) with the refetch marks in one transaction. */
async function refetchGroup(o: RefetchOptions, get: Endpoint, ids: string[], res: RefetchResult): Promise<void> {
  const fetched = await fetchTasks(o.client, get, ids, o.signal);
  const at = o.now().toISOString();
  for (const f of fetched.failed) {
    await o.wh.run(
      `UPDATE task_refetches SET refetched_at = $2::TIMESTAMPTZ, run_id = $3, status_code = $4 WHERE task_id = $1 AND refetched_at IS NULL`,
      [f.id, at, o.runId, f.statusCode],
    );
    res.failed++;
  }
  if (fetched.done.length > 0) {
    const done = fetched.done.map((t) => t.id!);
    // The load keeps each task's newest answer that loads: when this fetch's answer cannot be
    // read, that is the old, pre-fix one. Such a task is not marked refetched.
    const fromThisFetch = (loaded: LoadReport, t: (typeof fetched.done)[number]) => loaded.picked.get(t.id!) === t.callId;
    const report = await loadLanded(o.wh, { taskIds: done }, async (loaded) => {
      for (const t of fetched.done.filter((x) => fromThisFetch(loaded, x))) {
        const rows = loaded.perTask.get(t.id!) ?? 0;
        await o.wh.run(
          `UPDATE task_refetches SET refetched_at = $2::TIMESTAMPTZ, run_id = $3, status_code = 20000, rows_loaded = $4 WHERE task_id = $1 AND refetched_at IS NULL`,
          [t.id!, at, o.runId, rows],
        );
        await RunStore.recordReloaded(o.wh, t.id!, rows);
      }
    });
    const why = unloadedWhy(report.skippedFiles, 'the answer fetched now was not the one loaded');
    const unloaded = fetched.done.filter((t) => !fromThisFetch(report, t));
    res.unloaded.push(...unloaded.map((t) => ({ id: t.id!, why })));
    for (const [table, n] of report.rows) {
      res.rowsLoaded += n;
      if (n > 0) res.tables.add(table);
    }
    res.tables.add('task_refetches');
    res.refetched += done.length - unloaded.length;
  }
  if (fetched.failure !== undefined) throw fetched.failure;
}

function lit(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}
