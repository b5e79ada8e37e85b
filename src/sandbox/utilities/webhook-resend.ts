import { makeTask, STATUS } from '../envelope.js';
import type { HandlerReply, RouteContext } from '../handlers/context.js';
import { PER_CALL } from '../spec/index.js';
import { utilityBody } from './utility-reply.js';

/** Most ids one resend takes (spec/limits.ts). */
export const WEBHOOK_RESEND_MAX = PER_CALL.webhookResendIds;
const NO_CALLBACKS = { code: 40503, message: 'Callback is not supported for this function.' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `POST /v3/appendix/webhook_resend`: re-sends the pingback or postback of each task
 * named (one envelope task per id, `result` null, never charged). Past 100 ids → 40006;
 * a task of a function without callbacks (live) → 40503; a task posted without a
 * callback URL → 40501; an unknown id → 40401.
 */
export function handleWebhookResend(ctx: RouteContext): HandlerReply {
  const body = utilityBody(ctx);
  if (!Array.isArray(body)) return body;
  const tasks = body.map((q, i) => {
    const id = typeof q.id === 'string' ? q.id : '';
    const data = { api: 'appendix', function: 'webhook_resend', ...q };
    const answer = (status: { code: number; message: string }, message?: string) =>
      makeTask({ ...(UUID.test(id) ? { id } : {}), status, ...(message ? { message } : {}), path: ctx.pathSegments, data });
    if (i >= WEBHOOK_RESEND_MAX) return answer(STATUS.tooManyTasks);
    if (!UUID.test(id)) return answer(STATUS.invalidField, "Invalid Field: 'id' must be a task UUID.");
    const task = ctx.world.store.get(id, ctx.caller.key);
    if (!task) return answer(STATUS.taskNotFound);
    if (!task.callbacksSupported || task.fn !== 'task_post') return answer(NO_CALLBACKS);
    if (!task.callbackSpec) return answer(STATUS.invalidField, 'Invalid Field: the task was posted without pingback_url or postback_url.');
    if (task.readyAtMs > ctx.now.getTime()) return answer(STATUS.inQueue);
    ctx.world.callbacks.send(task);
    return answer(STATUS.ok);
  });
  return { http: 200, tasks, chargedUnits: 0, costMicros: 0 };
}
