import type { Endpoint } from './spec/index.js';
import type { HandlerReply } from './handlers/context.js';
import { STATUS } from './envelope.js';
import { DEFAULT_READINGS, type ServedReadings } from './readings.js';

/** Families whose `.ai` requests get `depth: 10` / `limit: 10` when they omit them (spec, AI-optimized response). */
const DEPTH_APIS = new Set(['serp', 'merchant', 'app_data', 'business_data', 'reviews']);
const LIMIT_APIS = new Set(['svc_labs', 'backlinks', 'content_analysis', 'on_page', 'domain_analytics']);

/** A `.ai` request's tasks with the depth/limit default of 10 filled in where the endpoint takes one. */
export function aiRequestDefaults(endpoint: Endpoint, tasks: unknown[]): unknown[] {
  const field = DEPTH_APIS.has(endpoint.api) ? 'depth' : LIMIT_APIS.has(endpoint.api) ? 'limit' : undefined;
  if (!field || (endpoint.mode !== 'live' && endpoint.mode !== 'task_post')) return tasks;
  return tasks.map((t) => (t && typeof t === 'object' && !Array.isArray(t) && !(field in t) ? { ...t, [field]: 10 } : t));
}

/**
 * The AI-optimized form of a value: empty strings, empty arrays and objects, null and
 * false removed; floats to at most three decimals; no `position` or `xpath`;
 * `monthly_searches` (and other `{year, month, <value>}` lists) as an object keyed by
 * `yyyy-mm`. Under the `aiZero: 'removed'` reading a 0 is "empty" too (readings.ts).
 */
export function aiTransform(value: unknown, zero: ServedReadings['aiZero'] = DEFAULT_READINGS.aiZero): unknown {
  const empty = (v: unknown) => isEmpty(v) || (zero === 'removed' && v === 0);
  if (typeof value === 'number') return Number.isInteger(value) ? value : Math.round(value * 1000) / 1000;
  if (Array.isArray(value)) {
    return value.map((v) => aiTransform(v, zero)).filter((v) => !empty(v));
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === 'position' || k === 'xpath') continue;
      const t = isMonthly(v) ? monthlyObject(v) : aiTransform(v, zero);
      if (!empty(t)) out[k] = t;
    }
    return out;
  }
  return value;
}

function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as object).length === 0;
  return false;
}

function isMonthly(v: unknown): v is Array<Record<string, unknown>> {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every(
      (m) =>
        m &&
        typeof m === 'object' &&
        typeof (m as { year?: unknown }).year === 'number' &&
        typeof (m as { month?: unknown }).month === 'number',
    )
  );
}

function monthlyObject(list: Array<Record<string, unknown>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of list) {
    const valueKey = Object.keys(m).find((k) => k !== 'year' && k !== 'month');
    const v = valueKey ? m[valueKey] : undefined;
    if (typeof v === 'number') out[`${m.year}-${String(m.month).padStart(2, '0')}`] = Math.round(v);
  }
  return out;
}

/** The items of an `.ai` answer: the result's `items` when it is one element holding them, else the result elements. */
function aiItems(result: unknown[] | null): unknown[] {
  if (!result) return [];
  if (result.length === 1) {
    const only = result[0] as { items?: unknown } | null;
    if (only && Array.isArray(only.items)) return only.items;
  }
  return result;
}

/**
 * Rewrites an envelope reply as the `.ai` response: `{id, status_code, status_message,
 * items}` of the (first) task, items transformed by {@link aiTransform}. No extra charge:
 * the charge headers are those of the call. A created task's 20100 is the call's 20000 under
 * the `aiCreatedStatus: 20000` reading (readings.ts).
 */
export function aiReply(reply: HandlerReply, readings: ServedReadings = DEFAULT_READINGS, _endpoint?: Endpoint): HandlerReply {
  if (reply.json !== undefined) return reply;
  const task = reply.tasks[0];
  const created = task?.status_code === STATUS.created.code && readings.aiCreatedStatus === 20000;
  const status = created
    ? { code: STATUS.ok.code, message: STATUS.ok.message }
    : task
      ? { code: task.status_code, message: task.status_message }
      : { code: reply.status?.code ?? STATUS.ok.code, message: reply.message ?? reply.status?.message ?? STATUS.ok.message };
  const json = {
    id: task?.id ?? null,
    status_code: status.code,
    status_message: status.message,
    items: aiTransform(aiItems(task?.result ?? null), readings.aiZero),
  };
  return { ...reply, json };
}
