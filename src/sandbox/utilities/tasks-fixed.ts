import { ENDPOINTS, endpointPath, type ResultFormat } from '../spec/index.js';
import type { HandlerReply, RouteContext } from '../handlers/context.js';
import { formatServiceDate } from '../serp-query.js';
import { utilityReply } from './utility-reply.js';

/** Most records one `tasks_fixed` call returns (spec, Limits). */
export const TASKS_FIXED_LIMIT = 1000;

/**
 * `GET /v3/serp/{engine}/{type}/tasks_fixed`: tasks re-parsed within the last 24 hours
 * and not collected since the re-parse (whether or not collected before it), with their
 * `task_get` paths (null where the endpoint table has no such format). A `task_get` takes a task
 * off the list. Free.
 */
export function handleTasksFixed(ctx: RouteContext): HandlerReply {
  const [engine = '', type = ''] = ctx.params;
  const fixed = ctx.world.store.fixed(ctx.caller.key, `/v3/serp/${engine}/${type}`, ctx.now.getTime(), TASKS_FIXED_LIMIT);
  const base = `/v3/serp/${engine}/${type}/task_get/`;
  const getters = new Map(
    ENDPOINTS.filter((e) => e.mode === 'task_get' && e.format && e.path.startsWith(base)).map((e) => [e.format as ResultFormat, e]),
  );
  const path = (format: ResultFormat, id: string) => {
    const e = getters.get(format);
    return e ? endpointPath(e, id) : null;
  };
  const result = fixed.map((t) => ({
    id: t.id,
    se: t.engine,
    se_type: 'v2',
    date_fixed: formatServiceDate(new Date(t.fixedAtMs ?? t.readyAtMs)),
    tag: t.tag ?? '',
    endpoint_regular: path('regular', t.id),
    endpoint_advanced: path('advanced', t.id),
    endpoint_html: path('html', t.id),
  }));
  return utilityReply(ctx, 'tasks_fixed', result, { se: engine, se_type: type });
}
