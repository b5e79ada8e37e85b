import { createHash } from 'node:crypto';
import { crawlSite, DEFAULT_CRAWL_PAGES } from '../data/on-page-crawl.js';
import { matchesFilter, orderItems } from '../data/item-query.js';
import { makeTask, STATUS } from '../envelope.js';
import { acceptTasks } from './accept-tasks.js';
import type { HandlerContext, HandlerReply } from './context.js';
import { echoData } from './echo-data.js';

/** Deep reading with `search_after_token` stops here (spec: up to 20,000 results). */
export const DEEP_READ_LIMIT = 20_000;
/** On-page results are kept this long after submission (spec, Limits). */
const RETENTION_MS = 30 * 24 * 3600 * 1000;

interface Token {
  o: number;
  h: string;
}

/** The request without its paging fields: a token is valid only for the same query. */
function queryHash(task: Record<string, unknown>): string {
  const { search_after_token: _t, offset: _o, tag: _g, ...rest } = task;
  return createHash('sha256')
    .update(JSON.stringify(rest, Object.keys(rest).sort()))
    .digest('hex')
    .slice(0, 16);
}

function encodeToken(t: Token): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeToken(text: string): Token | undefined {
  try {
    const t = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Token;
    return typeof t.o === 'number' && typeof t.h === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `POST /v3/on_page/{pages,links,resources}`: reads a crawl created by
 * `on_page/task_post` (40401 for another key's or an unknown id, 40403 after 30 days).
 * The crawl is `in_progress` until the task is done, with pages crawled growing on the
 * clock; resources are those of pages passing `relevant_pages_filters`; items pass
 * `filters`, are sorted by `order_by`, then paged by `limit` (default 100) and `offset`, or by `search_after_token` (valid only for the same
 * query, up to 20,000 results deep). Resources are free; pages and links are charged.
 */
export function handleOnPageRead(ctx: HandlerContext): HandlerReply {
  const acceptance = acceptTasks(ctx, 'live');
  if (acceptance.refused) return acceptance.reply;
  const kind = ctx.endpoint.path.split('/').pop() as 'pages' | 'links' | 'resources';
  const nowMs = ctx.now.getTime();
  const tasks = acceptance.outcomes.map((o) => {
    const data = echoData(o.raw, kind, ctx);
    if (!o.ok) return makeTask({ status: o.status, message: o.message, path: ctx.pathSegments, data });
    const q = o.task;
    const crawl = ctx.store.get(String(q.id), ctx.caller.key);
    if (!crawl || crawl.base !== '/v3/on_page') return makeTask({ status: STATUS.taskNotFound, path: ctx.pathSegments, data });
    if (nowMs - crawl.postedAtMs > RETENTION_MS)
      return makeTask({ status: { code: 40403, message: 'Results Expired.' }, path: ctx.pathSegments, data });
    const maxPages = typeof crawl.params.max_crawl_pages === 'number' ? Math.min(crawl.params.max_crawl_pages, 1000) : DEFAULT_CRAWL_PAGES;
    const site = crawlSite(ctx.seed, String(crawl.params.target), maxPages, new Date(crawl.postedAtMs));
    const span = Math.max(1, crawl.readyAtMs - crawl.postedAtMs);
    const done = nowMs >= crawl.readyAtMs;
    const crawled = done ? maxPages : Math.max(1, Math.floor((maxPages * (nowMs - crawl.postedAtMs)) / span));
    const crawledPages = site.pages.slice(0, crawled);
    const crawledUrls = new Set(crawledPages.map((p) => p.url));
    // relevant_pages_filters select holding pages (the pages endpoint's fields): a resource
    // is listed only when the page it was found on passes them
    const relevantUrls =
      q.relevant_pages_filters === undefined
        ? crawledUrls
        : new Set(crawledPages.filter((p) => matchesFilter(p, q.relevant_pages_filters)).map((p) => p.url));
    let items: unknown[] =
      kind === 'pages'
        ? site.pages.slice(0, crawled)
        : kind === 'links'
          ? site.links.filter((l) => crawledUrls.has(l.link_from))
          : site.resources.filter((r) => relevantUrls.has(r.found_on) && (q.url === undefined || r.found_on === q.url));
    if (q.filters !== undefined) items = items.filter((it) => matchesFilter(it, q.filters));
    items = orderItems(items, q.order_by as string[] | undefined);
    const limit = typeof q.limit === 'number' ? q.limit : 100;
    const hash = queryHash(q);
    let offset = typeof q.offset === 'number' ? q.offset : 0;
    if (typeof q.search_after_token === 'string') {
      const token = decodeToken(q.search_after_token);
      if (!token || token.h !== hash) {
        return makeTask({
          status: STATUS.invalidField,
          message:
            "Invalid Field: 'search_after_token' does not belong to this request; other parameters must equal those of the previous request.",
          path: ctx.pathSegments,
          data,
        });
      }
      offset = token.o;
    }
    const page = items.slice(offset, offset + limit);
    const next = offset + page.length;
    const result = {
      crawl_progress: done ? 'finished' : 'in_progress',
      // the spec's five counters; total_items_count and items_count also stay at the top
      // level, where earlier answers had them
      crawl_status: {
        max_crawl_pages: maxPages,
        pages_in_queue: maxPages - crawled,
        pages_crawled: crawled,
        total_items_count: items.length,
        items_count: page.length,
      },
      search_after_token: next < items.length && next < DEEP_READ_LIMIT ? encodeToken({ o: next, h: hash }) : null,
      current_offset: offset,
      total_items_count: items.length,
      items_count: page.length,
      items: page,
    };
    return makeTask({ status: STATUS.ok, path: ctx.pathSegments, data, costMicros: o.costMicros, result: [result] });
  });
  return { http: 200, tasks, chargedUnits: acceptance.chargedUnits, costMicros: acceptance.costMicros };
}
