import { buildResults } from '../data/results.js';
import { unusedDepthUnits } from '../depth-refund.js';
import { makeTask, STATUS } from '../envelope.js';
import { cnyUnitsToUsdMicros } from '../money.js';
import { formatResults } from '../task-result.js';
import { acceptTasks, storedTaskHead } from './accept-tasks.js';
import type { HandlerContext, HandlerReply } from './context.js';
import { echoData } from './echo-data.js';

/**
 * A live endpoint: one task per POST (extra tasks get 40000 and are not charged),
 * charged at the live price less unused depth, answered with 20000. Under the default
 * reading `refunds: 'task-cost'` the charge header, the cost header and the task's `cost`
 * are all net (a live refund is never seen apart); under `'balance'` they are the gross
 * price and the unused depth goes back to the balance only (readings.ts). The task is
 * remembered (collected, no callback) so `id_list` lists it and `webhook_resend`
 * can say the function has no callbacks.
 */
export function handleLive(ctx: HandlerContext): HandlerReply {
  const acceptance = acceptTasks(ctx, 'live');
  if (acceptance.refused) return acceptance.reply;
  const nowMs = ctx.now.getTime();
  let refundedUnits = 0;
  let refundedMicros = 0;
  const tasks = acceptance.outcomes.map((o) => {
    const data = echoData(o.raw, 'live', ctx);
    if (!o.ok) return makeTask({ status: o.status, message: o.message, path: ctx.pathSegments, data });
    const built = buildResults({
      seed: ctx.seed,
      endpoint: ctx.endpoint,
      params: o.task,
      at: ctx.now,
      drift: ctx.world.drift,
      ...(ctx.world.rankProfiles ? { rankProfiles: ctx.world.rankProfiles } : {}),
    });
    const unused = Math.min(o.priceUnits, unusedDepthUnits(ctx.endpoint, o.task, 'live', built, ctx.world.readings.extraDepthPrice));
    const refund = ctx.caller.live ? unused : 0;
    ctx.account.refund(refund);
    const inCost = ctx.world.readings.refunds === 'task-cost';
    const netCostMicros = inCost ? cnyUnitsToUsdMicros(o.priceUnits - unused) : o.costMicros;
    if (inCost) refundedUnits += refund;
    refundedMicros += o.costMicros - netCostMicros;
    const head = storedTaskHead(ctx, o.task, 'live', nowMs);
    ctx.store.add({
      ...head,
      readyAtMs: nowMs,
      data,
      callback: false,
      callbacksSupported: ctx.endpoint.callbacks,
      priceUnits: o.priceUnits,
      chargedUnits: ctx.caller.live ? o.priceUnits - refund : 0,
      costMicros: o.costMicros,
      netCostMicros,
      completed: true,
      collected: true,
      result: built,
      resultAtMs: nowMs,
    });
    ctx.world.stats.taskCreated(head.tag);
    return makeTask({
      id: head.id,
      status: STATUS.ok,
      path: ctx.pathSegments,
      data,
      costMicros: netCostMicros,
      result: formatResults(ctx.endpoint.api, ctx.endpoint.format, built),
    });
  });
  return { http: 200, tasks, chargedUnits: acceptance.chargedUnits - refundedUnits, costMicros: acceptance.costMicros - refundedMicros };
}
