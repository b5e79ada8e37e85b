import { makeTask, STATUS } from '../envelope.js';
import type { SerpParams } from '../serp-query.js';
import { buildSerpResult } from '../serp-result.js';
import { doneTaskObject, formatSerp } from '../task-result.js';
import type { HandlerContext, HandlerReply } from './context.js';

/** The id whose `task_get` answers a full result-element sample (spec, Sandbox). */
export const SAMPLE_TASK_ID = '00000000-0000-0000-0000-000000000000';

const SAMPLE_PARAMS: SerpParams = { keyword: 'coffee maker', location_code: 2840, language_code: 'en', depth: 10 };

/**
 * `GET .../task_get/[{format}/]{id}`: free. Unknown (or another key's, or another
 * function's) id → 40401, not done yet → 40602, done → 20000 with the result. A
 * collected task leaves the ready list (and, once re-parsed, `tasks_fixed`) but answers
 * the same content on every later fetch (the fixed content after a re-parse).
 */
export function handleTaskGet(ctx: HandlerContext): HandlerReply {
  const id = ctx.taskId ?? '';
  const frame =
    ctx.endpoint.api === 'serp'
      ? { api: 'serp', function: 'task_get', se: ctx.engine, se_type: ctx.type }
      : { api: ctx.endpoint.api, function: 'task_get' };
  const reply = (task: ReturnType<typeof makeTask>): HandlerReply => ({ http: 200, tasks: [task], chargedUnits: 0, costMicros: 0 });

  if (id === SAMPLE_TASK_ID && ctx.endpoint.api === 'serp') {
    const sample = buildSerpResult({ seed: ctx.seed, engine: ctx.engine, params: SAMPLE_PARAMS, at: ctx.now, full: true });
    const data = { ...frame, ...SAMPLE_PARAMS, device: 'desktop', os: 'windows' };
    return reply(makeTask({ id, status: STATUS.ok, path: ctx.pathSegments, data, result: [formatSerp(ctx.endpoint.format, sample)] }));
  }
  const task = ctx.store.get(id, ctx.caller.key);
  if (!task || task.base !== ctx.base) {
    return reply(makeTask({ id, status: STATUS.taskNotFound, path: ctx.pathSegments, data: frame }));
  }
  if (ctx.now.getTime() < task.readyAtMs) {
    return reply(makeTask({ id, status: STATUS.inQueue, path: ctx.pathSegments, data: { ...task.data, function: 'task_get' } }));
  }
  const done = doneTaskObject(
    ctx.seed,
    task,
    ctx.endpoint.format,
    ctx.pathSegments,
    ctx.now.getTime(),
    ctx.account,
    ctx.world.readings,
    !ctx.ai,
  );
  task.collected = true;
  task.collectedAtMs = ctx.now.getTime();
  ctx.store.touch(task);
  // The call is free (the envelope's cost is 0); the task's own `cost` is its net cost.
  return reply(done);
}
