import { randomUUID } from 'node:crypto';
import { STATUS, type Status } from '../envelope.js';
import { cnyUnitsToUsdMicros, formatCny } from '../money.js';
import { taskPriceUnits } from '../pricing.js';
import { checkTaskRules } from '../data/results.js';
import type { HandlerContext, HandlerReply } from './context.js';
import { validateTask } from './validate-task.js';

/** The status of a task the fault profile fails (result-shapes.md: 40103). */
export const TASK_FAILED = { code: 40103, message: 'Task execution failed. Please, resubmit the task.' } as const;

/** One posted task after checking: accepted with its price, or refused with a status. */
export type TaskOutcome =
  | { ok: true; raw: unknown; task: Record<string, unknown>; priceUnits: number; costMicros: number }
  | { ok: false; raw: unknown; status: Status; message: string };

/** The batch after checking and charging, or the 402 that refused all of it. */
export type Acceptance =
  { refused: false; outcomes: TaskOutcome[]; chargedUnits: number; costMicros: number } | { refused: true; reply: HandlerReply };

/**
 * Validates every task of a POST on its own (one bad task does not block the others),
 * refuses tasks past the endpoint's `maxTasksPerPost` (40006, or 40000 on live
 * endpoints), prices the rest and charges them in one step. When a live key's balance
 * cannot cover the batch, nothing is created and nothing is charged (HTTP 402). The
 * fault profile may fail a valid task (40103, not charged): one batch, mixed outcomes.
 */
export function acceptTasks(ctx: HandlerContext, mode: 'standard' | 'live'): Acceptance {
  let max = ctx.endpoint.maxTasksPerPost ?? Number.POSITIVE_INFINITY;
  // readings.ts `asyncTasksPerPost` (100 or 1); the events table states its own 100.
  if (mode === 'standard' && ctx.endpoint.family !== 'events_task_post') max = Math.min(max, ctx.world.readings.asyncTasksPerPost);
  if (mode === 'standard' && ctx.world.maxTasksPerPost !== undefined) max = Math.min(max, ctx.world.maxTasksPerPost);
  const overflow = mode === 'live' ? STATUS.oneTaskAtATime : STATUS.tooManyTasks;
  const outcomes = ctx.body.map((raw, i): TaskOutcome => {
    if (i >= max) {
      const message = mode === 'live' ? overflow.message : `You can set no more than ${max} task${max === 1 ? '' : 's'} at a time.`;
      return { ok: false, raw, status: overflow, message };
    }
    const check = validateTask(ctx.endpoint.request, raw);
    if (!check.ok) return { ok: false, raw, status: check.status, message: check.message };
    const rule = checkTaskRules(ctx.endpoint, check.task);
    if (rule) return { ok: false, raw, status: rule.status, message: rule.message };
    if (ctx.world.faults.nextTaskFails()) {
      ctx.world.stats.fault('task_failure');
      return { ok: false, raw, status: TASK_FAILED, message: `${TASK_FAILED.message} (simulated by the fault profile; not charged)` };
    }
    const priceUnits = ctx.endpoint.charged ? taskPriceUnits(ctx.endpoint, check.task, mode, ctx.world.readings.extraDepthPrice) : 0;
    return { ok: true, raw, task: check.task, priceUnits, costMicros: cnyUnitsToUsdMicros(priceUnits) };
  });
  let priceUnits = 0;
  let costMicros = 0;
  for (const o of outcomes) {
    if (!o.ok) continue;
    priceUnits += o.priceUnits;
    costMicros += o.costMicros;
  }
  const chargedUnits = ctx.account.charge(priceUnits, ctx.caller.live);
  if (chargedUnits === undefined) {
    const message = `Payment Required: the POST costs ${formatCny(priceUnits)} CNY and the balance is ${formatCny(ctx.account.balanceUnits)} CNY; nothing was created or charged.`;
    return { refused: true, reply: { http: 402, status: STATUS.paymentRequired, message, tasks: [], chargedUnits: 0, costMicros: 0 } };
  }
  return { refused: false, outcomes, chargedUnits, costMicros };
}

/** The fields every stored task of an accepted POST shares, live or posted: who, where, when, what. */
export function storedTaskHead(ctx: HandlerContext, task: Record<string, unknown>, fn: 'task_post' | 'live', nowMs: number) {
  return {
    id: randomUUID(),
    key: ctx.caller.key,
    api: ctx.endpoint.api,
    fn,
    endpointId: ctx.endpoint.id,
    postPath: ctx.endpoint.path,
    base: ctx.base,
    engine: ctx.engine,
    type: ctx.type,
    postedAtMs: nowMs,
    params: task,
    tag: typeof task.tag === 'string' ? task.tag : null,
  };
}
