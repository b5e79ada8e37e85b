import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { matchEndpoint, type Endpoint, type FamilyId } from './spec/index.js';
import { authenticate, type Caller } from './auth.js';
import { makeEnvelope, makeTask, STATUS } from './envelope.js';
import { callName } from './call-name.js';
import { failure, type HandlerReply } from './handlers/context.js';
import { formatCny, formatUsd } from './money.js';
import { stringifyWithRaw } from './raw-json.js';
import { routeFamily } from './route-family.js';
import { routeCall } from './router.js';
import { persistStep } from './state-journal.js';
import { v1Error } from './v1/v1-context.js';
import type { SandboxWorld } from './world.js';

export type { SandboxLogEntry } from './world.js';

/** Largest POST body accepted; far above 100 tasks of the largest allowed fields. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** `Retry-After` of an injected 429 burst (before the time scale): a transient refusal, not a spent minute. */
const BURST_RETRY_AFTER_MS = 2_000;

/** The admin view's path (served only with `admin: true`, without a key). */
export const ADMIN_STATS_PATH = '/__admin/stats';

/**
 * The HTTP face of the emulator: auth, faults, rate limits, routing, the envelope, and
 * the charge headers on every response (401s, 429s and free GETs included), so a
 * client's ledger can be reconciled against `log` call by call.
 */
export function createSandboxServer(world: SandboxWorld, beforeCall: () => void = () => {}): Server {
  return createServer((req, res) => {
    readBody(req).then(
      (body) => respond(world, req, res, body, beforeCall),
      () => respond(world, req, res, undefined, beforeCall),
    );
  });
}

/** What a call asked for: its endpoint and task id when the path names one (none for a malformed %-escape). */
interface MatchedCall {
  endpoint: Endpoint | undefined;
  taskId: string | undefined;
  ai: boolean;
}

type Fault = ReturnType<SandboxWorld['faults']['nextCall']>;

/** A reply with the fault drawn for its call and, when it was processed (not refused before), its `{api}` and function. */
interface HandledCall {
  reply: HandlerReply;
  fault: Fault;
  processed: [string, string] | undefined;
}

async function respond(
  world: SandboxWorld,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer | undefined,
  beforeCall: () => void,
): Promise<void> {
  const started = performance.now();
  const method = req.method ?? 'GET';
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (world.admin && method === 'GET' && path === ADMIN_STATS_PATH) {
    send(res, 200, JSON.stringify(world.stats.body()), {});
    return;
  }
  beforeCall();
  const isV1 = path.startsWith('/v1/');
  const match = matchCall(method, path, isV1, body);
  const family = routeFamily(path, match.endpoint);
  const now = world.now();
  const { reply, fault, processed } = afterFault(world, await handle(world, req, { method, path, body, now, isV1, family, ...match }));
  const requestId = randomUUID();
  // A persisted emulator writes down what the call changed before anything of the answer leaves.
  if (world.journal) {
    const call = processed
      ? { at: now.getTime(), method, path, api: processed[0], fn: processed[1], http: reply.http, units: reply.chargedUnits, requestId }
      : undefined;
    persistStep(world, call);
  }
  const text =
    reply.raw !== undefined
      ? reply.raw.text
      : reply.json !== undefined
        ? JSON.stringify(reply.json)
        : stringifyWithRaw(makeEnvelope({ ...reply, elapsedMs: performance.now() - started }));
  const chargeCny = formatCny(reply.chargedUnits);
  const headers: Record<string, string> = {
    // The emulator's own clock (a --date start, a test's clock, the clockSkew reading), not the machine's:
    // a client that bounds a request time by the service's now reads it here (RFC 9110 Date, whole seconds).
    Date: now.toUTCString(),
    'X-Svc-Charge-CNY': chargeCny,
    'X-Svc-Cost-USD': formatUsd(reply.costMicros),
    'X-Svc-Balance-CNY': formatCny(world.account.balanceUnits),
    'X-Svc-Request-ID': requestId,
    ...(reply.raw ? { 'Content-Type': reply.raw.contentType } : {}),
    ...reply.headers,
  };
  world.stats.call(family, fault.kind === 'drop' ? 0 : reply.http, reply.chargedUnits);
  await deliver(world, req, res, fault, { method, path, status: reply.http, requestId, chargeCny }, text, headers);
}

function matchCall(method: string, path: string, isV1: boolean, body: Buffer | undefined): MatchedCall {
  try {
    const m = matchEndpoint(method, path, isV1 ? jsonOrUndefined(body) : undefined);
    return { endpoint: m?.endpoint, taskId: m?.taskId, ai: m?.ai ?? false };
  } catch {
    return { endpoint: undefined, taskId: undefined, ai: false }; // a malformed %-escape in the task id
  }
}

/** Authenticates the caller, draws the call's fault, refuses it at the gate or routes it to its handler. */
async function handle(
  world: SandboxWorld,
  req: IncomingMessage,
  c: MatchedCall & { method: string; path: string; body: Buffer | undefined; now: Date; isV1: boolean; family: FamilyId },
): Promise<HandledCall> {
  const { method, path, body, now, endpoint, taskId, ai } = c;
  const caller = authenticate(req.headers.authorization, world.keys);
  if (!caller) {
    const reply = c.isV1
      ? v1Error(401, 'invalid_api_key', 'Incorrect API key provided.', 'authentication_error')
      : failure(401, STATUS.unauthorized);
    return { reply, fault: { kind: 'none' }, processed: undefined };
  }
  world.journal?.claim(caller.key, world.store); // restored tasks hold their key's hash until it calls
  const fault = world.faults.nextCall(path);
  let reply = gate(world, caller, fault, c.family, now.getTime(), c.isV1, { path, body });
  if (reply.http !== 0) return { reply, fault: { kind: 'none' }, processed: undefined };
  try {
    reply = await routeCall(world, { method, path, body, caller, now, endpoint, taskId, ai });
  } catch (err) {
    reply = failure(500, STATUS.internal, `Internal Error: ${err instanceof Error ? err.message : String(err)}`);
  }
  const processed = callName(path, endpoint);
  world.usage.record(now, ...processed, reply.chargedUnits);
  return { reply, fault, processed };
}

/** The `server_error_after` fault: processed and charged (the headers say so), but the answer is an error. */
function afterFault(world: SandboxWorld, h: HandledCall): HandledCall {
  if (h.fault.kind !== 'server_error_after') return h;
  // The client cannot tell what was created.
  world.stats.fault('http500_after');
  const reply = {
    ...failure(500, STATUS.internal, 'Internal Error: simulated after processing (fault profile).'),
    chargedUnits: h.reply.chargedUnits,
    costMicros: h.reply.costMicros,
  };
  return { ...h, reply };
}

/** Logs the call and sends its answer, or drops the socket, cuts the body or waits first, as the fault says. */
async function deliver(
  world: SandboxWorld,
  req: IncomingMessage,
  res: ServerResponse,
  fault: Fault,
  entry: { method: string; path: string; status: number; requestId: string; chargeCny: string },
  text: string,
  headers: Record<string, string>,
): Promise<void> {
  switch (fault.kind) {
    case 'drop':
      world.stats.fault('drop');
      world.log.push({ ...entry, status: 0 });
      req.socket.destroy();
      return;
    case 'malformed':
      world.stats.fault('malformed');
      world.log.push(entry);
      send(res, entry.status, text.slice(0, Math.max(1, Math.floor(text.length / 2))), headers);
      return;
    case 'slow':
      world.stats.fault('slow');
      await new Promise((r) => setTimeout(r, fault.kind === 'slow' ? fault.delayMs : 0));
      break;
    default:
      break;
  }
  world.log.push(entry);
  if (!res.destroyed) send(res, entry.status, text, headers);
}

/**
 * The refusals that come before any processing: injected 429 bursts and 5xx, then the
 * family's rate limit. Returns `http: 0` when the call may go ahead.
 */
function gate(
  world: SandboxWorld,
  caller: Caller,
  fault: Fault,
  family: FamilyId,
  nowMs: number,
  isV1: boolean,
  call: RefusedCall,
): HandlerReply {
  if (fault.kind === 'rate_limited') {
    world.stats.fault('burst429');
    return rateLimited(world, BURST_RETRY_AFTER_MS / world.timeScale, isV1, 'simulated burst (fault profile)', call);
  }
  if (fault.kind === 'rate_limited_200') {
    world.stats.fault('rate_limited_200');
    // The rate limit as some answers carry it: HTTP 200, the top-level status 40202 (not charged).
    return {
      ...failure(
        200,
        { code: 40202, message: 'Rate Limit Per Minute Exceeded.' },
        'Rate limit per minute exceeded: simulated (fault profile).',
      ),
      headers: { 'Retry-After': '1' },
    };
  }
  if (fault.kind === 'server_error') {
    world.stats.fault(`http${fault.http}`);
    if (isV1) return v1Error(fault.http, 'server_error', 'The upstream service is unavailable (simulated fault).', 'svc_error');
    const status = fault.http === 503 ? { code: 50301, message: 'Third-party API is unavailable.' } : STATUS.internal;
    return failure(fault.http, status);
  }
  const refusal = world.limiter?.take(caller.key, family, nowMs);
  if (refusal) return rateLimited(world, refusal.retryAfterMs, isV1, `${refusal.limit} calls per minute of family ${refusal.family}`, call);
  return { http: 0, tasks: [], chargedUnits: 0, costMicros: 0 };
}

/** The call a rate limit refuses: its path and body, echoed by the `http200` reading. */
interface RefusedCall {
  path: string;
  body: Buffer | undefined;
}

const RATE_LIMITED = { code: 40202, message: 'Rate Limit Per Minute Exceeded.' };

/**
 * A rate-limit refusal, in the reading the world serves (readings.ts `rateLimitBody`):
 * `http429`, HTTP 429 with top-level 40202 and no tasks; `http200`, HTTP 200 with top-level
 * 20000 and each posted task echoed with task status 40202 (one such task for a GET or an
 * unreadable body). `/v1` always answers 429 (the spec's errors table). Never charged.
 */
function rateLimited(world: SandboxWorld, retryAfterClockMs: number, isV1: boolean, why: string, call: RefusedCall): HandlerReply {
  // The wait is read on the emulator clock, whose minute is already divided by the time scale.
  const realMs = Math.max(1, Math.ceil(retryAfterClockMs));
  const secs = world.timeScale === 1 ? String(Math.max(1, Math.ceil(realMs / 1000))) : (realMs / 1000).toFixed(3);
  const headers = { 'Retry-After': secs, 'retry-after-ms': String(realMs) };
  const message = `Rate limit per minute exceeded: ${why}.`;
  if (isV1) return { ...v1Error(429, 'rate_limit_exceeded', message, 'rate_limit_error'), headers };
  if (world.readings.rateLimitBody === 'http429') return { ...failure(429, RATE_LIMITED, message), headers };
  const posted = jsonOrUndefined(call.body);
  const segments = call.path.split('/').filter(Boolean);
  const echoes = Array.isArray(posted) && posted.length > 0 ? posted : [{}];
  const tasks = echoes.map((t) =>
    makeTask({
      status: RATE_LIMITED,
      message,
      path: segments,
      data: t && typeof t === 'object' && !Array.isArray(t) ? (t as Record<string, unknown>) : {},
    }),
  );
  return { http: 200, tasks, chargedUnits: 0, costMicros: 0, headers };
}

function jsonOrUndefined(body: Buffer | undefined): unknown {
  if (!body || body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, http: number, text: string, headers: Record<string, string>): void {
  res.writeHead(http, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
