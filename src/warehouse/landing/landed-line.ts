import { redactCallbackSecrets } from '../../redact.js';
import { CALLS_KIND, kindOfPath } from '../normalize/result-tables/index.js';
import { shapeOf } from '../normalize/shape.js';

/** Kind of a body that is not JSON: landed as received, reported, never loaded. */
export const MALFORMED_KIND = '_malformed';

/**
 * One response as the client received it, the record the raw landing stores: the body as
 * sent, its charge headers and what was asked. The warehouse owns this type; the client
 * hands it one of these and knows nothing of storage.
 */
export interface RawResponse {
  callId: string;
  receivedAt: Date;
  method: 'GET' | 'POST';
  path: string;
  endpointId: string;
  httpStatus: number;
  charge: { requestId: string | null; chargeCny: string | null; costUsd: string | null; balanceCny: string | null };
  /** Tasks sent in the body (0 for GET, 1 for a `/v1` body). */
  tasksSent: number;
  body: string;
  /** The name of what was asked (the client's `requestHash`: a hash of the request sent), if it had a body. */
  requestHash?: string | null;
}

export interface LandingContext {
  runId: string;
  pipeline: string;
}

/** One landed response: the NDJSON line and what the raw index keeps of it. */
export interface LandedLine {
  line: string;
  kind: string;
  parsed: boolean;
  taskIds: string[];
  shape: string[];
  refundCny: string;
  /** The `cost` of each task the body carries a result for (`taskIds`): the net cost a refund is measured by. */
  taskCosts: { taskId: string; costUsd: number }[];
  /** What `raw_heads` keeps of it (headOf), or null. */
  head: string | null;
}

/** How a line is built beyond the response itself. */
export interface LandedLineOptions {
  /** A callback the service sent us, not a call we made. */
  callback?: boolean;
  /** The one task a callback was accepted for: only it is indexed. */
  callbackTask?: string;
  /**
   * `raw.body` has had its callback secrets cut out already (`redactCallbackSecrets`) and
   * `value` is `JSON.parse(raw.body)`: the line is built without reading the body again.
   */
  redactedAndParsed?: { value: unknown };
}

/**
 * The landed line of a response. A JSON body goes in `body` as JSON (not as a string), so
 * DuckDB reads it with explicit column types at full speed; when re-serializing it would
 * not give back the exact bytes received (pretty-printing, a number JSON cannot hold), the
 * bytes are also kept verbatim in `body_text`. A body that is not JSON is kept as a string
 * in `body`, under the kind `_malformed`, so it never breaks a typed read. The exact bytes
 * are always recoverable: `body_text`, else `body` if it is a string, else
 * `JSON.stringify(body)`; except that callback secrets are cut out of it first (the service
 * echoes a task's `postback_url` in `data`, see `redactCallbackSecrets`).
 *
 * A callback's line names the one task it was accepted for (`callbackTask`): only that id
 * is indexed, so a load never takes another task's rows from it.
 */
export function landedLine(raw: RawResponse, ctx: LandingContext, opts: LandedLineOptions = {}): LandedLine {
  let parsed: unknown;
  let ok = true;
  if (opts.redactedAndParsed) {
    // The caller redacted the body and parsed it already: each body is read as JSON once.
    parsed = opts.redactedAndParsed.value;
  } else {
    raw = { ...raw, body: redactCallbackSecrets(raw.body) };
    try {
      parsed = JSON.parse(raw.body);
    } catch {
      ok = false;
    }
  }
  // An answer with results is a JSON object: other JSON (a number, a string, a list, null) at a
  // path of results is kept as a malformed body, which no typed read meets.
  const pathKind = kindOfPath(raw.path);
  if (ok && !isObject(parsed) && pathKind !== CALLS_KIND) ok = false;
  let text = ok ? JSON.stringify(parsed) : null;
  // A lone surrogate escaped in a string (`\ud800`): DuckDB refuses the whole file that holds
  // it. The body is landed with U+FFFD in its place, and the bytes received in `body_text`.
  if (text !== null && text.includes(LONE_SURROGATE_ESCAPE)) {
    const clean = wellFormed(parsed);
    const cleanText = JSON.stringify(clean);
    if (cleanText !== text) [parsed, text] = [clean, cleanText];
  }
  const exact = text === raw.body;
  const kind = ok ? pathKind : MALFORMED_KIND;
  const refund = raw.charge.chargeCny?.startsWith('-') ? raw.charge.chargeCny.slice(1) : '0';
  const meta = {
    call_id: raw.callId,
    run_id: ctx.runId,
    pipeline: ctx.pipeline,
    received_at: raw.receivedAt.toISOString(),
    method: raw.method,
    path: raw.path,
    endpoint_id: raw.endpointId,
    kind,
    http_status: raw.httpStatus,
    request_id: raw.charge.requestId,
    charge_cny: raw.charge.chargeCny,
    cost_usd: raw.charge.costUsd,
    balance_cny: raw.charge.balanceCny,
    refund_cny: refund,
    tasks_sent: raw.tasksSent,
    // What was asked: a paid answer is found again by it rather than bought twice (landedAnswer).
    ...(raw.requestHash ? { request_hash: raw.requestHash } : {}),
    parsed: ok,
    // A callback the service sent us, not a call we made: no ledger row, even when reindexed.
    ...(opts.callback ? { callback: true } : {}),
    ...(opts.callbackTask ? { callback_task: opts.callbackTask } : {}),
  };
  const shape = ok && kind !== CALLS_KIND ? shapeOf(parsed) : [];
  const head = JSON.stringify(meta).slice(0, -1);
  const body = ok ? text : JSON.stringify(raw.body);
  const line = `${head},"shape":${JSON.stringify(shape)},"body":${body}${ok && !exact ? `,"body_text":${JSON.stringify(raw.body)}` : ''}}`;
  const done = ok ? doneTasks(parsed) : { ids: [], costs: [] };
  // A callback line is accepted for one task: only that task is indexed (and refunded) from it.
  const mine = (id: string) => !opts.callbackTask || id === opts.callbackTask;
  const bodyHead = ok && text !== null && kind !== CALLS_KIND ? headOf(parsed, text.length) : null;
  return { line, kind, parsed: ok, taskIds: done.ids.filter(mine), shape, refundCny: refund, taskCosts: done.costs.filter((c) => mine(c.taskId)), head: bodyHead };
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/**
 * How JSON.stringify begins a lone surrogate (`\ud800`, lower case; a pair it writes as is). Also
 * found after an escaped backslash (`\\ud…`): wellFormed then changes nothing. A search for the
 * text, not a pattern, which is faster on a large body (docs/performance.md).
 */
const LONE_SURROGATE_ESCAPE = '\\ud';

/** A lone UTF-16 surrogate (half of a pair, without the other half). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `v` with every lone surrogate of its strings and keys replaced by U+FFFD. */
function wellFormed(v: unknown): unknown {
  if (typeof v === 'string') return v.replace(LONE_SURROGATE, '\ufffd');
  if (Array.isArray(v)) return v.map(wellFormed);
  if (!isObject(v)) return v;
  // No prototype: a key named __proto__ is copied as a key, as JSON.parse made it.
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(v)) out[k.replace(LONE_SURROGATE, '\ufffd')] = wellFormed(v[k]);
  return out;
}

/**
 * The head of a `/v3` answer (`raw_heads`): the body as landed without, in each of its
 * `tasks[].result[]` objects, every key whose value is a list holding an object (a SERP's
 * `items`: the rows of a deeper table). The result-level tables read it instead of the body,
 * which they would parse whole a second time after the items' read (load-landed.ts). Null
 * when nothing would be dropped, or when the head would be more than a quarter of the body
 * (`bodyChars`): it is kept for a year, and is worth it only where it is small.
 */
export function headOf(body: unknown, bodyChars: number): string | null {
  if (!isObject(body) || !Array.isArray(body.tasks)) return null;
  let dropped = false;
  const tasks = body.tasks.map((t: unknown) => {
    if (!isObject(t) || !Array.isArray(t.result)) return t;
    const result = t.result.map((r: unknown) => {
      if (!isObject(r)) return r;
      // No prototype: a key named __proto__ is copied as a key, as JSON.parse made it.
      const kept: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const k of Object.keys(r)) {
        const v = r[k];
        if (Array.isArray(v) && v.some(isObject)) dropped = true;
        else kept[k] = v;
      }
      return kept;
    });
    return { ...t, result };
  });
  if (!dropped) return null;
  const head = JSON.stringify({ ...body, tasks });
  return head.length * 4 <= bodyChars ? head : null;
}

/** Tasks of a body that carry their result (status 20000, a result array), with their `cost` where it is a number. */
function doneTasks(body: unknown): { ids: string[]; costs: { taskId: string; costUsd: number }[] } {
  const tasks = (body as { tasks?: unknown } | null)?.tasks;
  const out = { ids: [] as string[], costs: [] as { taskId: string; costUsd: number }[] };
  if (!Array.isArray(tasks)) return out;
  for (const t of tasks as { id?: unknown; status_code?: unknown; result?: unknown; cost?: unknown }[]) {
    if (!t || typeof t.id !== 'string' || t.status_code !== 20000 || !Array.isArray(t.result)) continue;
    out.ids.push(t.id);
    if (typeof t.cost === 'number' && Number.isFinite(t.cost)) out.costs.push({ taskId: t.id, costUsd: t.cost });
  }
  return out;
}
