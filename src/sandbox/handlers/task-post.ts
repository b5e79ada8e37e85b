import { randomUUID } from 'node:crypto';
import { makeTask, STATUS } from '../envelope.js';
import { acceptTasks } from './accept-tasks.js';
import type { HandlerContext, HandlerReply } from './context.js';
import { echoData } from './echo-data.js';

/**
 * `POST .../task_post`: creates a task per valid element (20100, `result: null`), charged
 * at creation; the task becomes ready `readyAfterMs` later on the injected clock.
 */
export function handleTaskPost(ctx: HandlerContext): HandlerReply {
  const acceptance = acceptTasks(ctx, 'standard');
  if (acceptance.refused) return acceptance.reply;
  const nowMs = ctx.now.getTime();
  const tasks = acceptance.outcomes.map((o) => {
    const data = echoData(o.raw, 'task_post', ctx.engine, ctx.type);
    if (!o.ok) return makeTask({ status: o.status, message: o.message, path: ctx.pathSegments, data });
    const id = randomUUID();
    const tag = typeof o.task.tag === 'string' ? o.task.tag : null;
    ctx.store.add({
      id,
      key: ctx.caller.key,
      engine: ctx.engine,
      type: ctx.type,
      postedAtMs: nowMs,
      readyAtMs: nowMs + ctx.readyAfterMs,
      params: o.task,
      data,
      tag,
      callback: o.task.pingback_url !== undefined || o.task.postback_url !== undefined,
      chargedUnits: ctx.caller.live ? o.priceUnits : 0,
      costMicros: o.costMicros,
      collected: false,
    });
    return makeTask({ id, status: STATUS.created, path: ctx.pathSegments, data, costMicros: o.costMicros });
  });
  return { http: 200, tasks, chargedUnits: acceptance.chargedUnits, costMicros: acceptance.costMicros };
}
