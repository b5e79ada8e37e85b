import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { matchEndpoint, SERP_ORGANIC_ENGINES, type Endpoint } from '../catalog/index.js';
import type { SandboxAccount } from './account.js';
import { authenticate } from './auth.js';
import { makeEnvelope, STATUS } from './envelope.js';
import type { HandlerContext, HandlerReply } from './handlers/context.js';
import { handleLive } from './handlers/live.js';
import { handleTaskGet } from './handlers/task-get.js';
import { handleTaskPost } from './handlers/task-post.js';
import { handleTasksReady } from './handlers/tasks-ready.js';
import { formatCny, formatUsd } from './money.js';
import type { TaskStore } from './task-store.js';

/** One response the emulator sent, for tests that reconcile a ledger against it. */
export interface SandboxLogEntry {
  method: string;
  path: string;
  status: number;
  requestId: string;
  chargeCny: string;
}

/** Everything the server needs, resolved by `startSandbox`. */
export interface SandboxServerDeps {
  seed: number;
  now: () => Date;
  readyAfterMs: number;
  keys: readonly string[] | undefined;
  account: SandboxAccount;
  store: TaskStore;
  log: SandboxLogEntry[];
}

/** Largest POST body accepted; far above 100 tasks of the largest allowed fields. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

type Handler = (ctx: HandlerContext) => HandlerReply;
const HANDLERS: Partial<Record<Endpoint['mode'], Handler>> = {
  task_post: handleTaskPost,
  tasks_ready: handleTasksReady,
  task_get: handleTaskGet,
  live: handleLive,
};

/**
 * The HTTP face of the emulator: auth, routing through the catalog, body checks, the
 * envelope, and the charge headers on every response (401s and free GETs included),
 * so a client's ledger can be reconciled against `log` call by call.
 */
export function createSandboxServer(deps: SandboxServerDeps): Server {
  return createServer((req, res) => {
    readBody(req).then(
      (body) => respond(deps, req, res, body),
      () => respond(deps, req, res, undefined),
    );
  });
}

function respond(deps: SandboxServerDeps, req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): void {
  const started = performance.now();
  const method = req.method ?? 'GET';
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  let reply: HandlerReply;
  try {
    reply = route(deps, req, method, path, body);
  } catch (err) {
    reply = failure(500, STATUS.internal, `Internal Error: ${err instanceof Error ? err.message : String(err)}`);
  }
  const requestId = randomUUID();
  const envelope = makeEnvelope({ ...reply, elapsedMs: performance.now() - started });
  const text = JSON.stringify(envelope);
  const chargeCny = formatCny(reply.chargedUnits);
  res.writeHead(reply.http, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'X-Svc-Charge-CNY': chargeCny,
    'X-Svc-Cost-USD': formatUsd(reply.costMicros),
    'X-Svc-Balance-CNY': formatCny(deps.account.balanceUnits),
    'X-Svc-Request-ID': requestId,
  });
  res.end(text);
  deps.log.push({ method, path, status: reply.http, requestId, chargeCny });
}

function route(deps: SandboxServerDeps, req: IncomingMessage, method: string, path: string, body: Buffer | undefined): HandlerReply {
  const caller = authenticate(req.headers.authorization, deps.keys);
  if (!caller) return failure(401, STATUS.unauthorized);
  let match: ReturnType<typeof matchEndpoint>;
  try {
    match = matchEndpoint(method, path);
  } catch {
    match = undefined; // a malformed %-escape in the task id
  }
  if (!match) return failure(404, STATUS.notFound, `Not Found: no endpoint ${method} ${path}.`);
  const m = /^\/v3\/serp\/([^/]+)\/([^/]+)\//.exec(match.endpoint.path);
  const handler = HANDLERS[match.endpoint.mode];
  const engine = m?.[1] ?? '';
  const type = m?.[2] ?? '';
  if (!handler || type !== 'organic' || !(SERP_ORGANIC_ENGINES as readonly string[]).includes(engine)) {
    return failure(404, STATUS.notFound, `Not Found: ${method} ${path} is not emulated by the sandbox yet.`);
  }
  let tasks: unknown[] = [];
  if (method === 'POST') {
    const parsed = parseTasks(body);
    if (!Array.isArray(parsed)) return parsed;
    tasks = parsed;
  }
  const now = deps.now();
  return handler({
    endpoint: match.endpoint,
    engine,
    type,
    ...(match.taskId === undefined ? {} : { taskId: match.taskId }),
    pathSegments: path.split('/').filter(Boolean),
    body: tasks,
    caller,
    now,
    seed: deps.seed,
    readyAfterMs: deps.readyAfterMs,
    store: deps.store,
    account: deps.account,
  });
}

/** The body as a non-empty JSON array of tasks, or the 40503/40502 reply. */
function parseTasks(body: Buffer | undefined): unknown[] | HandlerReply {
  if (body === undefined) return failure(200, STATUS.postInvalid, 'POST data is invalid: the body could not be read (too large?).');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return failure(200, STATUS.postInvalid, 'POST data is invalid: the body is not JSON.');
  }
  if (!Array.isArray(parsed)) return failure(200, STATUS.postInvalid, 'POST data is invalid: the body must be a JSON array of tasks.');
  if (parsed.length === 0) return failure(200, STATUS.postEmpty);
  return parsed;
}

function failure(http: number, status: { code: number; message: string }, message?: string): HandlerReply {
  return { http, status, ...(message === undefined ? {} : { message }), tasks: [], chargedUnits: 0, costMicros: 0 };
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
