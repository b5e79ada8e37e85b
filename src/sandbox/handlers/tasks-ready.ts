import { ENDPOINTS, endpointPath, type ResultFormat } from '../../catalog/index.js';
import { makeTask, STATUS } from '../envelope.js';
import { formatServiceDate } from '../serp-query.js';
import type { HandlerContext, HandlerReply } from './context.js';

/** Most tasks one `tasks_ready` call lists (result-shapes.md). */
export const READY_LIST_LIMIT = 1000;

/**
 * `GET .../tasks_ready`: the caller's finished, uncollected tasks of this engine/type.
 * `tasks[0]` is the call itself; its `result[]` names each ready task with the
 * `task_get` paths of the catalog (null for a format the catalog lacks). Free.
 */
export function handleTasksReady(ctx: HandlerContext): HandlerReply {
  const ready = ctx.store.ready(ctx.caller.key, ctx.engine, ctx.type, ctx.now.getTime(), READY_LIST_LIMIT);
  const base = ctx.endpoint.path.replace(/\/tasks_ready$/, '');
  const getters = new Map(
    ENDPOINTS.filter((e) => e.mode === 'task_get' && e.format && e.path.startsWith(`${base}/task_get/`)).map((e) => [e.format as ResultFormat, e]),
  );
  const endpointFor = (format: ResultFormat, id: string) => {
    const e = getters.get(format);
    return e ? endpointPath(e, id) : null;
  };
  const result = ready.map((t) => ({
    id: t.id,
    se: t.engine,
    se_type: t.type,
    date_posted: formatServiceDate(new Date(t.postedAtMs)),
    tag: t.tag,
    endpoint_regular: endpointFor('regular', t.id),
    endpoint_advanced: endpointFor('advanced', t.id),
    endpoint_html: endpointFor('html', t.id),
  }));
  const data = { api: 'serp', function: 'tasks_ready', se: ctx.engine, se_type: ctx.type };
  return { http: 200, tasks: [makeTask({ status: STATUS.ok, path: ctx.pathSegments, data, result })], chargedUnits: 0, costMicros: 0 };
}
