import { endpoint, ON_PAGE_MAX_LIMIT, ON_PAGE_MAX_OFFSET } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import { loadLanded, type RunStore, type Warehouse } from '../warehouse/index.js';
import { unloadedWhy } from './load-landed-tasks.js';

export type OnPageRead = 'pages' | 'links' | 'resources';

export interface OnPageOptions {
  client: ServiceClient;
  wh: Warehouse;
  store: RunStore;
  /** What to read of a crawl, by the job that posted it (a job since removed from the file: pages). */
  readsOf: (job: string) => { read: readonly OnPageRead[]; maxItems: number; pageSize?: number };
  pollIntervalMs: number;
  timeoutMs: number;
  signal?: AbortSignal;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  onProgress?: (p: { collected: number; failed: number; pending: number }) => void;
}

export interface OnPageResult {
  collected: number;
  failed: number;
  pending: number;
  tables: Set<string>;
  /** Kinds of crawls read only in part: a cap was reached before the crawl's last item. */
  capped: CrawlCap[];
}

/** A kind of a crawl whose reading stopped at a cap, with the items read and the crawl's count. */
export interface CrawlCap {
  crawl: string;
  job: string;
  kind: OnPageRead;
  read: number;
  /** `total_items_count` of the last answer; undefined when the answer did not say. */
  total: number | undefined;
  /** `max_items`: the job's own cap; `offset_reach`: the deepest offset the service takes (ON_PAGE_MAX_OFFSET). */
  why: 'max_items' | 'offset_reach';
  maxItems: number;
}

/** Items per read call: the most the on-page endpoints return at once. */
const PAGE = ON_PAGE_MAX_LIMIT;
/** A crawl the service no longer has (unknown id, or past the 30 days it keeps results). */
const GONE = new Set([40401, 40403]);

interface Crawl {
  task_id: string;
  job: string;
}

/**
 * Collects the run's on-page crawls. Crawls have no ready list: each waiting crawl is asked
 * for its progress with the free `on_page/resources` call (`limit: 1`); a finished crawl's
 * pages, links or resources are read 1000 at a time by `offset` to the end (the spec's
 * `offset` goes to 2,000,000; `search_after_token` only to 20,000), every body
 * landed by the client as it comes, and then all of that crawl's rows and its collected
 * mark commit together. A crawl not finished by the timeout stays waiting for the next run.
 */
export async function collectOnPage(o: OnPageOptions): Promise<OnPageResult> {
  const started = o.now().getTime();
  const res: OnPageResult = { collected: 0, failed: 0, pending: 0, tables: new Set(), capped: [] };
  const probe = endpoint('on_page.resources');
  for (;;) {
    const crawls: Crawl[] = (await o.store.pendingTasks('on_page.task_post')).map((t) => ({ task_id: t.taskId, job: t.job }));
    res.pending = crawls.length;
    o.onProgress?.({ collected: res.collected, failed: res.failed, pending: crawls.length });
    if (crawls.length === 0) return res;
    for (const crawl of crawls) {
      if (o.signal?.aborted) break;
      const check = await o.client.call(probe, { tasks: [{ id: crawl.task_id, limit: 1 }] });
      const verdict = check.outcome.tasks[0];
      const probeId = check.envelope.tasks?.[0]?.id;
      if (verdict && !verdict.ok) {
        if (GONE.has(verdict.statusCode)) {
          await o.store.markFailed([{ taskId: crawl.task_id, statusCode: verdict.statusCode, message: verdict.message }]);
          res.failed++;
        }
        continue;
      }
      const progress = (check.envelope.tasks?.[0]?.result?.[0] as { crawl_progress?: unknown } | undefined)?.crawl_progress;
      if (progress !== 'finished') continue;
      const readIds = probeId ? [probeId] : [];
      const { read, maxItems, pageSize } = o.readsOf(crawl.job);
      for (const fn of read) {
        const r = await readAll(o, fn, crawl.task_id, maxItems, pageSize ?? PAGE);
        readIds.push(...r.ids);
        if (r.cap) res.capped.push({ crawl: crawl.task_id, job: crawl.job, kind: fn, read: r.read, total: r.total, why: r.cap, maxItems });
      }
      const at = o.now();
      // Collected only when every read answer loaded (the load's picked): a crawl with a read
      // answer that did not load is failed with why, not collected without its rows (reading
      // it again would be charged again; its landed bodies are kept under raw/).
      const report = await loadLanded(o.wh, { taskIds: readIds }, async (loaded) => {
        if (!readIds.every((id) => loaded.picked.has(id))) return;
        let rows = 0;
        for (const id of readIds) rows += loaded.perTask.get(id) ?? 0;
        await o.store.markCollected(new Map([[crawl.task_id, rows]]), at);
      });
      for (const [table, n] of report.rows) if (n > 0) res.tables.add(table);
      const unloaded = readIds.filter((id) => !report.picked.has(id));
      if (unloaded.length === 0) res.collected++;
      else {
        const why = unloadedWhy(report.skippedFiles, 'no parsed answer in the raw index names them');
        await o.store.markFailed([
          {
            taskId: crawl.task_id,
            statusCode: 0,
            message: `crawl read, but ${unloaded.length} of its ${readIds.length} read answer(s) could not be loaded (${why}); the bodies are kept under raw/ (\`pipeline replay\` loads them once they read), and the crawl is not read again`,
          },
        ]);
        res.failed++;
      }
      res.pending--;
      o.onProgress?.({ collected: res.collected, failed: res.failed, pending: res.pending });
    }
    if (res.pending === 0 || o.signal?.aborted || o.now().getTime() - started >= o.timeoutMs) return res;
    // Never sleeps past the collection deadline.
    await o.sleep(Math.min(o.pollIntervalMs, started + o.timeoutMs - o.now().getTime()));
    if (o.now().getTime() - started >= o.timeoutMs) return res;
  }
}

/** What follows a page of a read: the next call's `offset` and `limit`, or why the read ends. */
export type NextRead = { offset: number; limit: number } | { end: 'all' } | { end: 'max_items' | 'offset_reach' };

/**
 * After a page of `got` items (of `asked`), `read` in all and the crawl's `total` (its
 * `total_items_count`, when the answer gave it): the next page, by `offset`, or the end. The
 * end is `all` when the crawl has no more (an empty page, `total` reached, or, without a
 * total, a short page); else a cap: `offset_reach` past the deepest offset the service
 * takes (ON_PAGE_MAX_OFFSET), `max_items` at the job's own cap.
 */
export function nextRead(
  s: { read: number; total: number | undefined; got: number; asked: number },
  maxItems: number,
  pageSize: number,
): NextRead {
  if (s.got === 0 || (s.total !== undefined ? s.read >= s.total : s.got < s.asked)) return { end: 'all' };
  if (s.read > ON_PAGE_MAX_OFFSET) return { end: 'offset_reach' };
  if (s.read >= maxItems) return { end: 'max_items' };
  return { offset: s.read, limit: Math.min(pageSize, maxItems - s.read) };
}

/**
 * Reads one kind of a finished crawl page by page, by `offset`; returns the read calls' task
 * ids (their bodies are landed), the items read, and the cap that stopped it before the end.
 */
async function readAll(
  o: OnPageOptions,
  fn: OnPageRead,
  crawlId: string,
  maxItems: number,
  pageSize: number,
): Promise<{ ids: string[]; read: number; total: number | undefined; cap?: 'max_items' | 'offset_reach' }> {
  const ep = endpoint(`on_page.${fn}`);
  const ids: string[] = [];
  let read = 0;
  let total: number | undefined;
  let next: NextRead = { offset: 0, limit: Math.min(pageSize, maxItems) };
  while ('offset' in next) {
    const { offset, limit } = next;
    const call = await o.client.call(ep, { tasks: [{ id: crawlId, limit, ...(offset > 0 ? { offset } : {}) }] });
    const task = call.envelope.tasks?.[0];
    if (task?.id) ids.push(task.id);
    const result = task?.result?.[0] as { items_count?: unknown; total_items_count?: unknown; items?: unknown } | undefined;
    if (!call.outcome.tasks[0]?.ok || !result) return { ids, read, total };
    const got = typeof result.items_count === 'number' ? result.items_count : Array.isArray(result.items) ? result.items.length : 0;
    if (typeof result.total_items_count === 'number') total = result.total_items_count;
    read += got;
    next = nextRead({ read, total, got, asked: limit }, maxItems, pageSize);
  }
  return { ids, read, total, ...(next.end === 'all' ? {} : { cap: next.end }) };
}
