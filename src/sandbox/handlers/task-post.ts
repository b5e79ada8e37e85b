import { makeTask, STATUS } from '../envelope.js';
import type { StoredTask, TaskCallback } from '../task-store.js';
import { mayBeRefunded } from '../depth-refund.js';
import { acceptTasks, storedTaskHead } from './accept-tasks.js';
import type { HandlerContext, HandlerReply } from './context.js';
import { echoData } from './echo-data.js';

/** A re-parse (fault profile) lands this long after the task is done, on the emulator clock, before scaling. */
const REPARSE_AFTER_MS = 60_000;

/**
 * `POST .../task_post`: creates a task per valid element (20100, `result: null`), charged
 * at creation; the task is done `readyAfterMs` later on the injected clock, then either
 * joins the ready list or is delivered by its pingback/postback.
 */
export function handleTaskPost(ctx: HandlerContext): HandlerReply {
  const acceptance = acceptTasks(ctx, 'standard');
  if (acceptance.refused) return acceptance.reply;
  const nowMs = ctx.now.getTime();
  const tasks = acceptance.outcomes.map((o) => {
    const data = echoData(o.raw, 'task_post', ctx);
    if (!o.ok) {
      const failed = makeTask({ status: o.status, message: o.message, path: ctx.pathSegments, data });
      if (o.status.code >= 40100) {
        ctx.world.errors.add(ctx.caller.key, ctx.endpoint.api, ctx.now, {
          id: failed.id,
          function: 'task_post',
          error_code: o.status.code,
          error_message: o.message,
          http_url: ctx.endpoint.path,
          http_method: 'POST',
          http_code: 200,
          http_time: 0,
          http_response: '',
        });
      }
      return failed;
    }
    const head = storedTaskHead(ctx, o.task, 'task_post', nowMs);
    const callbackSpec = callbackOf(o.task);
    const readyAtMs = nowMs + ctx.readyAfterMs;
    const reparsed = ctx.world.faults.nextTaskReparsed();
    const chargedUnits = ctx.caller.live ? o.priceUnits : 0;
    const task: StoredTask = {
      ...head,
      readyAtMs,
      drift: ctx.world.drift,
      ...(ctx.world.rankProfiles ? { rankProfiles: ctx.world.rankProfiles } : {}),
      data,
      callback: callbackSpec !== undefined,
      ...(callbackSpec ? { callbackSpec, callbackState: 'pending' as const } : {}),
      callbacksSupported: ctx.endpoint.callbacks,
      ...(reparsed ? { fixedAtMs: readyAtMs + REPARSE_AFTER_MS / ctx.world.timeScale } : {}),
      priceUnits: o.priceUnits,
      chargedUnits,
      costMicros: o.costMicros,
      collected: false,
    };
    ctx.store.add(task, mayBeRefunded(ctx.endpoint, o.task, chargedUnits));
    ctx.world.callbacks.created(task);
    ctx.world.stats.taskCreated(head.tag);
    return makeTask({ id: head.id, status: STATUS.created, path: ctx.pathSegments, data, costMicros: o.costMicros });
  });
  return { http: 200, tasks, chargedUnits: acceptance.chargedUnits, costMicros: acceptance.costMicros };
}

function callbackOf(task: Record<string, unknown>): TaskCallback | undefined {
  if (typeof task.postback_url === 'string') {
    const format = task.postback_data === 'regular' || task.postback_data === 'html' ? task.postback_data : 'advanced';
    return { kind: 'postback', url: task.postback_url, format };
  }
  if (typeof task.pingback_url === 'string') return { kind: 'pingback', url: task.pingback_url, format: 'advanced' };
  return undefined;
}
