import { ENDPOINTS, endpointPath, type Endpoint, type ResultFormat } from '../spec/index.js';
import { makeTask, STATUS } from '../envelope.js';
import { formatServiceDate } from '../serp-query.js';
import type { HandlerContext, HandlerReply } from './context.js';

/** Most tasks one `tasks_ready` call lists (result-shapes.md), under the default reading; the served one is `readyListPaging` (readings.ts). */
export const READY_LIST_LIMIT = 1000;

/** The `task_get` endpoints of a function, by format (`undefined` for the format-less ones). */
export function taskGetters(base: string): Map<ResultFormat | undefined, Endpoint> {
  let found = GETTERS.get(base);
  if (!found) {
    found = new Map(ENDPOINTS.filter((e) => e.mode === 'task_get' && e.path.startsWith(`${base}/task_get/`)).map((e) => [e.format, e]));
    GETTERS.set(base, found);
  }
  return found;
}

const GETTERS = new Map<string, Map<ResultFormat | undefined, Endpoint>>();

/**
 * `GET .../tasks_ready`: the caller's finished, uncollected tasks of this function.
 * `tasks[0]` is the call itself; its `result[]` names each ready task with the
 * `task_get` paths of the endpoint table (null for a format it lacks), or, for
 * functions with one format-less `task_get` (keywords data), the keywords-data variant
 * `{id, se, function, date_posted, tag, endpoint}`. Free.
 */
export function handleTasksReady(ctx: HandlerContext): HandlerReply {
  const ready = ctx.store.ready(ctx.caller.key, ctx.base, ctx.now.getTime(), ctx.world.readings.readyListPaging);
  const getters = taskGetters(ctx.base);
  const endpointFor = (format: ResultFormat | undefined, id: string) => {
    const e = getters.get(format);
    return e ? endpointPath(e, id) : null;
  };
  const plain = getters.has(undefined);
  const fn = ctx.base.split('/').pop() ?? '';
  const result = ready.map((t) =>
    plain
      ? {
          id: t.id,
          se: t.engine,
          function: fn,
          date_posted: formatServiceDate(new Date(t.postedAtMs)),
          tag: t.tag,
          endpoint: endpointFor(undefined, t.id),
        }
      : {
          id: t.id,
          se: t.engine,
          se_type: t.type,
          date_posted: formatServiceDate(new Date(t.postedAtMs)),
          tag: t.tag,
          endpoint_regular: endpointFor('regular', t.id),
          endpoint_advanced: endpointFor('advanced', t.id),
          endpoint_html: endpointFor('html', t.id),
        },
  );
  const data =
    ctx.endpoint.api === 'serp'
      ? { api: 'serp', function: 'tasks_ready', se: ctx.engine, se_type: ctx.type }
      : { api: ctx.endpoint.api, function: 'tasks_ready' };
  return { http: 200, tasks: [makeTask({ status: STATUS.ok, path: ctx.pathSegments, data, result })], chargedUnits: 0, costMicros: 0 };
}
