import { randomUUID } from 'node:crypto';
import { makeTask, STATUS, type EnvelopeTask, type Status } from '../envelope.js';
import type { HandlerReply, RouteContext } from '../handlers/context.js';

/** The `{api}` values of the `errors` and `id_list` endpoints: the spec's list (spec/endpoints.ts). */
export { UTILITY_APIS } from '../spec/index.js';

/** A free, one-task answer: `tasks[0].result` holds the utility's records. */
export function utilityReply(ctx: RouteContext, fn: string, result: unknown[] | null, data: Record<string, unknown> = {}): HandlerReply {
  const api = ctx.pathSegments[1] ?? '';
  const task = makeTask({ id: randomUUID(), status: STATUS.ok, path: ctx.pathSegments, data: { api, function: fn, ...data }, result });
  return { http: 200, tasks: [task], chargedUnits: 0, costMicros: 0 };
}

/** A task of a utility POST that failed its rules (40501 by default). */
export function utilityTaskError(
  ctx: RouteContext,
  fn: string,
  message: string,
  data: Record<string, unknown> = {},
  status: Status = STATUS.invalidField,
): EnvelopeTask {
  const api = ctx.pathSegments[1] ?? '';
  return makeTask({ status, message, path: ctx.pathSegments, data: { api, function: fn, ...data } });
}

/** The POST body of a utility as an array of objects, or the 40503/40502 reply. */
export function utilityBody(ctx: RouteContext): Record<string, unknown>[] | HandlerReply {
  const none = (status: Status, message?: string): HandlerReply => ({
    http: 200,
    status,
    ...(message ? { message } : {}),
    tasks: [],
    chargedUnits: 0,
    costMicros: 0,
  });
  if (ctx.badJson) return none(STATUS.postInvalid, 'POST data is invalid: the body is not JSON.');
  if (!Array.isArray(ctx.json)) return none(STATUS.postInvalid, 'POST data is invalid: the body must be a JSON array.');
  if (ctx.json.length === 0) return none(STATUS.postEmpty);
  return ctx.json.map((t) => (t !== null && typeof t === 'object' && !Array.isArray(t) ? (t as Record<string, unknown>) : {}));
}

/**
 * Parses the spec's request date-time `yyyy-mm-dd hh-mm-ss +00:00` (UTC). The time is
 * written with dashes in the spec's tables and with colons in its results; both are read.
 */
export function parseServiceDateTime(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2})[-:](\d{2})[-:](\d{2}) \+00:00$/.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return Number.isNaN(ms) ? undefined : ms;
}

/** An optional integer within [min, max], its default, or an error text naming the rule. */
export function intParam(task: Record<string, unknown>, field: string, def: number, min: number, max: number): number | string {
  const v = task[field];
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) return `'${field}' must be an integer from ${min} to ${max}`;
  return v;
}
