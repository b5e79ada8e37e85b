import { checkRequest, type Endpoint } from '../spec/index.js';
import type { Caller } from '../auth.js';
import type { HandlerReply } from '../handlers/context.js';
import { cnyUnitsToUsdMicros } from '../money.js';
import type { SandboxWorld } from '../world.js';

/** What a `/v1` handler gets: the matched entry, the parsed JSON body and the world. */
export interface V1Context {
  endpoint: Endpoint;
  body: unknown;
  caller: Caller;
  now: Date;
  world: SandboxWorld;
}

/** The standard `/v1` error body (`{error: {message, type, code, param}}`), as standard clients read it. */
export function v1Error(
  http: number,
  code: string,
  message: string,
  type = 'invalid_request_error',
  param: string | null = null,
): HandlerReply {
  return { http, tasks: [], chargedUnits: 0, costMicros: 0, json: { error: { message, type, code, param } } };
}

/** The body checked against the entry's rules (spec/limits.ts), or the 400 naming every failing field. */
export function parseV1Body<T>(ctx: V1Context): { ok: true; body: T } | { ok: false; reply: HandlerReply } {
  const rules = ctx.endpoint.request;
  if (ctx.body === undefined) return { ok: false, reply: v1Error(400, 'invalid_json', 'The body must be a JSON object.') };
  if (!rules) return { ok: true, body: ctx.body as T };
  const { issues, unknownFields } = checkRequest(rules, ctx.body);
  const all = [...issues, ...unknownFields.map((f) => ({ field: f, message: 'is not a field of this request' }))];
  if (all.length === 0) return { ok: true, body: ctx.body as T };
  const message = all.map((i) => `'${i.field}' ${i.message}`).join('; ');
  return { ok: false, reply: v1Error(400, 'invalid_request', `Invalid request: ${message}.`, 'invalid_request_error', all[0]!.field) };
}

/**
 * Charges a `/v1` call (sandbox keys never) and answers `json`; when a live key's balance
 * cannot cover `needUnits` (the maximum estimate), answers 402 with `svc_error` / 50002
 * and charges nothing.
 */
export function chargeAndAnswer(ctx: V1Context, chargeUnits: number, json: unknown, needUnits = chargeUnits): HandlerReply {
  if (ctx.caller.live && needUnits > ctx.world.account.balanceUnits) {
    return v1Error(402, '50002', 'Insufficient balance: the account cannot cover this call.', 'svc_error');
  }
  const charged = ctx.world.account.charge(chargeUnits, ctx.caller.live) ?? 0;
  return { http: 200, tasks: [], chargedUnits: charged, costMicros: cnyUnitsToUsdMicros(chargeUnits), json };
}
