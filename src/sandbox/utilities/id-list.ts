import { idListEarliest as earliestFrom, PER_CALL } from '../spec/index.js';
import { makeTask, STATUS } from '../envelope.js';
import type { HandlerReply, RouteContext } from '../handlers/context.js';
import { formatServiceDate } from '../serp-query.js';
import { usdNumber } from '../money.js';
import { intParam, parseServiceDateTime, utilityBody, utilityTaskError } from './utility-reply.js';

const KNOWN = new Set(['datetime_from', 'datetime_to', 'limit', 'offset', 'sort', 'include_metadata', 'tag']);

/** Earliest allowed `datetime_from`: one month back with metadata, six without (spec, id_list). */
export function idListEarliest(nowMs: number, includeMetadata: boolean): number {
  return earliestFrom(nowMs, includeMetadata);
}

/**
 * `POST /v3/{api}/id_list`: the caller's tasks of that api posted in
 * [`datetime_from`, `datetime_to`], finished and unfinished, sorted by execution time
 * (`asc` default), at most 1000 a call. With `include_metadata` each record carries the
 * parameters posted, which is how a crashed run finds its already-paid tasks by tag.
 * Free.
 */
export function handleIdList(ctx: RouteContext): HandlerReply {
  const body = utilityBody(ctx);
  if (!Array.isArray(body)) return body;
  const api = ctx.params[0] ?? '';
  const nowMs = ctx.now.getTime();
  const tasks = body.map((q) => {
    const data = { ...q, api, function: 'id_list' };
    const err = (m: string) => utilityTaskError(ctx, 'id_list', `Invalid Field: ${m}.`, data);
    const unknown = Object.keys(q).filter((k) => !KNOWN.has(k));
    if (unknown.length > 0)
      return utilityTaskError(ctx, 'id_list', `Unknown Fields: ${unknown.map((k) => `'${k}'`).join(', ')}.`, data, STATUS.unknownFields);
    if (q.include_metadata !== undefined && typeof q.include_metadata !== 'boolean') return err("'include_metadata' must be true or false");
    const withMeta = q.include_metadata === true;
    const limit = intParam(q, 'limit', PER_CALL.idListLimit, 1, PER_CALL.idListLimit);
    const offset = intParam(q, 'offset', 0, 0, PER_CALL.maxOffset);
    if (typeof limit === 'string') return err(limit);
    if (typeof offset === 'string') return err(offset);
    const sort = q.sort ?? 'asc';
    if (sort !== 'asc' && sort !== 'desc') return err("'sort' must be 'asc' or 'desc'");
    const fromMs = parseServiceDateTime(q.datetime_from);
    const toMs = parseServiceDateTime(q.datetime_to);
    if (fromMs === undefined) return err("'datetime_from' is required, as 'yyyy-mm-dd hh-mm-ss +00:00' (UTC)");
    if (toMs === undefined) return err("'datetime_to' is required, as 'yyyy-mm-dd hh-mm-ss +00:00' (UTC)");
    const earliest = idListEarliest(nowMs, withMeta);
    if (fromMs < earliest)
      return err(`'datetime_from' may be at most ${withMeta ? '1 month' : '6 months'} back${withMeta ? ' with include_metadata' : ''}`);
    if (fromMs > nowMs || toMs > nowMs) return err("'datetime_from' and 'datetime_to' must not be later than now");
    if (toMs <= fromMs) return err("'datetime_to' must be later than 'datetime_from'");
    const rows = [...ctx.world.store.all()]
      .filter((t) => t.key === ctx.caller.key && t.api === api && t.postedAtMs >= fromMs && t.postedAtMs <= toMs)
      .sort((a, b) => (sort === 'asc' ? a.postedAtMs - b.postedAtMs : b.postedAtMs - a.postedAtMs))
      .slice(offset, offset + limit)
      .map((t) => {
        const done = t.readyAtMs <= nowMs;
        return {
          id: t.id,
          url: t.postPath,
          datetime_posted: formatServiceDate(new Date(t.postedAtMs)),
          ...(done ? { datetime_done: formatServiceDate(new Date(t.readyAtMs)) } : {}),
          status: done ? 'finished' : 'in_progress',
          cost: usdNumber(t.costMicros),
          ...(withMeta ? { metadata: t.params } : {}),
        };
      });
    return makeTask({ status: STATUS.ok, path: ctx.pathSegments, data, result: rows });
  });
  return { http: 200, tasks, chargedUnits: 0, costMicros: 0 };
}
