import { ERRORS_WINDOW_MS } from '../error-log.js';
import type { HandlerReply, RouteContext } from '../handlers/context.js';
import { makeTask, STATUS } from '../envelope.js';
import { PER_CALL } from '../spec/index.js';
import { intParam, parseServiceDateTime, utilityBody, utilityTaskError } from './utility-reply.js';

const KNOWN = new Set(['limit', 'offset', 'filtered_function', 'datetime_from', 'datetime_to', 'tag']);

/**
 * `POST /v3/{api}/errors`: failed callbacks and tasks of the last 7 days, newest first,
 * one envelope task per query object. Rules of the spec's table: `limit` 1-1000
 * (default 1000), `offset` 0-100000000, `filtered_function` one function name,
 * `datetime_from` not before 7 days ago nor after now, `datetime_to` after it (the table
 * says only "later than `datetime_from`" for it, unlike id_list's "not after now": a
 * `datetime_to` in the future is taken, the window ending now). Free.
 */
export function handleErrors(ctx: RouteContext): HandlerReply {
  const body = utilityBody(ctx);
  if (!Array.isArray(body)) return body;
  const api = ctx.params[0] ?? '';
  const nowMs = ctx.now.getTime();
  const tasks = body.map((q) => {
    const data = { ...q, api, function: 'errors' };
    const unknown = Object.keys(q).filter((k) => !KNOWN.has(k));
    if (unknown.length > 0)
      return utilityTaskError(ctx, 'errors', `Unknown Fields: ${unknown.map((k) => `'${k}'`).join(', ')}.`, data, STATUS.unknownFields);
    const limit = intParam(q, 'limit', PER_CALL.errorsLimit, 1, PER_CALL.errorsLimit);
    const offset = intParam(q, 'offset', 0, 0, PER_CALL.maxOffset);
    if (typeof limit === 'string') return utilityTaskError(ctx, 'errors', `Invalid Field: ${limit}.`, data);
    if (typeof offset === 'string') return utilityTaskError(ctx, 'errors', `Invalid Field: ${offset}.`, data);
    if (q.filtered_function !== undefined && typeof q.filtered_function !== 'string') {
      return utilityTaskError(ctx, 'errors', "Invalid Field: 'filtered_function' must be a string.", data);
    }
    const earliest = nowMs - ERRORS_WINDOW_MS;
    let fromMs = earliest;
    let toMs = nowMs;
    if (q.datetime_from !== undefined) {
      const v = parseServiceDateTime(q.datetime_from);
      if (v === undefined)
        return utilityTaskError(ctx, 'errors', "Invalid Field: 'datetime_from' must be 'yyyy-mm-dd hh-mm-ss +00:00' (UTC).", data);
      if (v < earliest || v > nowMs)
        return utilityTaskError(
          ctx,
          'errors',
          "Invalid Field: 'datetime_from' must be within the last 7 days and not later than now.",
          data,
        );
      fromMs = v;
    }
    if (q.datetime_to !== undefined) {
      const v = parseServiceDateTime(q.datetime_to);
      if (v === undefined)
        return utilityTaskError(ctx, 'errors', "Invalid Field: 'datetime_to' must be 'yyyy-mm-dd hh-mm-ss +00:00' (UTC).", data);
      // The spec bounds only datetime_from by now; datetime_to is "later than datetime_from" (the window ends at now).
      if (v <= fromMs) return utilityTaskError(ctx, 'errors', "Invalid Field: 'datetime_to' must be later than 'datetime_from'.", data);
      toMs = Math.min(v, nowMs);
    }
    const fn = typeof q.filtered_function === 'string' ? q.filtered_function : undefined;
    const rows = ctx.world.errors.query(ctx.caller.key, api, fromMs, toMs, fn).slice(offset, offset + limit);
    return makeTask({ status: STATUS.ok, path: ctx.pathSegments, data, result: rows });
  });
  return { http: 200, tasks, chargedUnits: 0, costMicros: 0 };
}
