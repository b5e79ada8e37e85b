import { randomUUID } from 'node:crypto';
import { makeTask, STATUS } from '../envelope.js';
import { serpFormats } from '../serp-formats.js';
import type { SerpParams } from '../serp-query.js';
import { buildSerpResult } from '../serp-result.js';
import { acceptTasks } from './accept-tasks.js';
import type { HandlerContext, HandlerReply } from './context.js';
import { echoData } from './echo-data.js';

/**
 * `POST .../live/{regular|advanced}`: one task per POST (extra tasks get 40000 and are
 * not charged), charged at the live price, answered at once with status 20000. The task
 * is remembered (collected, no callback) so `id_list` lists it and `webhook_resend`
 * can say the function has no callbacks.
 */
export function handleLive(ctx: HandlerContext): HandlerReply {
  const acceptance = acceptTasks(ctx, 'live');
  if (acceptance.refused) return acceptance.reply;
  const nowMs = ctx.now.getTime();
  const tasks = acceptance.outcomes.map((o) => {
    const data = echoData(o.raw, 'live', ctx.engine, ctx.type);
    if (!o.ok) return makeTask({ status: o.status, message: o.message, path: ctx.pathSegments, data });
    const advanced = buildSerpResult({ seed: ctx.seed, engine: ctx.engine, params: o.task as SerpParams, at: ctx.now });
    const result = ctx.endpoint.format === 'regular' ? serpFormats.regular(advanced) : advanced;
    const id = randomUUID();
    const tag = typeof o.task.tag === 'string' ? o.task.tag : null;
    ctx.store.add({
      id,
      key: ctx.caller.key,
      api: 'serp',
      fn: 'live',
      endpointId: ctx.endpoint.id,
      postPath: ctx.endpoint.path,
      engine: ctx.engine,
      type: ctx.type,
      postedAtMs: nowMs,
      readyAtMs: nowMs,
      params: o.task,
      data,
      tag,
      callback: false,
      callbacksSupported: ctx.endpoint.callbacks,
      chargedUnits: ctx.caller.live ? o.priceUnits : 0,
      costMicros: o.costMicros,
      collected: true,
      result: advanced,
      resultAtMs: nowMs,
    });
    ctx.world.stats.taskCreated(tag);
    return makeTask({ id, status: STATUS.ok, path: ctx.pathSegments, data, costMicros: o.costMicros, result: [result] });
  });
  return { http: 200, tasks, chargedUnits: acceptance.chargedUnits, costMicros: acceptance.costMicros };
}
