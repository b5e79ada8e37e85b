import { makeTask, STATUS } from '../envelope.js';
import { serpFormats } from '../serp-formats.js';
import type { SerpParams } from '../serp-query.js';
import { buildSerpResult } from '../serp-result.js';
import type { SerpAdvancedResult } from '../serp-types.js';
import type { HandlerContext, HandlerReply } from './context.js';

/** The id whose `task_get` answers a full result-element sample (spec, Sandbox). */
export const SAMPLE_TASK_ID = '00000000-0000-0000-0000-000000000000';

const SAMPLE_PARAMS: SerpParams = { keyword: 'coffee maker', location_code: 2840, language_code: 'en', depth: 10 };

/**
 * `GET .../task_get/{regular|advanced|html}/{id}`: free. Unknown (or another key's) id
 * → 40401, not ready yet → 40602, ready → 20000 with the result. The result is built
 * once, for the day the task finished, and kept: a collected task leaves the ready list
 * but answers the same content on every later fetch.
 */
export function handleTaskGet(ctx: HandlerContext): HandlerReply {
  const id = ctx.taskId ?? '';
  const frame = { api: 'serp', function: 'task_get', se: ctx.engine, se_type: ctx.type };
  const reply = (task: ReturnType<typeof makeTask>): HandlerReply => ({ http: 200, tasks: [task], chargedUnits: 0, costMicros: 0 });

  if (id === SAMPLE_TASK_ID) {
    const sample = buildSerpResult({ seed: ctx.seed, engine: ctx.engine, params: SAMPLE_PARAMS, at: ctx.now, full: true });
    const data = { ...frame, ...SAMPLE_PARAMS, device: 'desktop', os: 'windows' };
    return reply(makeTask({ id, status: STATUS.ok, path: ctx.pathSegments, data, result: [format(ctx, sample)] }));
  }
  const task = ctx.store.get(id, ctx.caller.key);
  if (!task || task.engine !== ctx.engine || task.type !== ctx.type) {
    return reply(makeTask({ id, status: STATUS.taskNotFound, path: ctx.pathSegments, data: frame }));
  }
  const data = { ...task.data, function: 'task_get' };
  if (ctx.now.getTime() < task.readyAtMs) {
    return reply(makeTask({ id, status: STATUS.inQueue, path: ctx.pathSegments, data }));
  }
  task.result ??= buildSerpResult({
    seed: ctx.seed,
    engine: task.engine,
    params: task.params as SerpParams,
    at: new Date(task.readyAtMs),
  });
  task.collected = true;
  return reply(makeTask({ id, status: STATUS.ok, path: ctx.pathSegments, data, result: [format(ctx, task.result)] }));
}

function format(ctx: HandlerContext, result: SerpAdvancedResult): unknown {
  switch (ctx.endpoint.format) {
    case 'regular':
      return serpFormats.regular(result);
    case 'html':
      return serpFormats.html(result);
    default:
      return result;
  }
}
