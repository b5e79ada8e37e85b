import type { Endpoint, ResultKind } from './spec/index.js';
import { aiReply, aiRequestDefaults } from './ai-variant.js';
import { functionBase } from './function-base.js';
import { handleOnPageRead } from './handlers/on-page-read.js';
import type { Caller } from './auth.js';
import { STATUS } from './envelope.js';
import { failure, type Handler, type HandlerReply } from './handlers/context.js';
import { handleLive } from './handlers/live.js';
import { handleTaskGet } from './handlers/task-get.js';
import { handleTaskPost } from './handlers/task-post.js';
import { handleTasksReady } from './handlers/tasks-ready.js';
import { OWN_ROUTES } from './own-routes.js';
import { handleChat } from './v1/chat.js';
import { handleEmbeddings } from './v1/embeddings.js';
import { handleImage } from './v1/images.js';
import { v1Error, type V1Context } from './v1/v1-context.js';
import type { SandboxWorld } from './world.js';

const HANDLERS: Partial<Record<Endpoint['mode'], Handler>> = {
  task_post: handleTaskPost,
  tasks_ready: handleTasksReady,
  task_get: handleTaskGet,
  live: handleLive,
};

/** One call after auth, faults and rate limits: what to route. */
export interface CallInput {
  method: string;
  path: string;
  body: Buffer | undefined;
  caller: Caller;
  now: Date;
  endpoint: Endpoint | undefined;
  taskId: string | undefined;
  /** The path carried the `.ai` suffix. */
  ai: boolean;
}

/**
 * Routes a call: first the paths the emulator serves on its own (`/v1`, the utilities),
 * then the endpoint table's rows (spec/endpoints.ts) by mode. Anything else is 404 / 40400.
 */
export async function routeCall(world: SandboxWorld, call: CallInput): Promise<HandlerReply> {
  const { method, path } = call;
  const pathSegments = path.split('/').filter(Boolean);
  if (path.startsWith('/v1/')) return routeV1(world, call);
  const ownPath = path.replace(/\/+$/, '').replace(/\.ai$/, '');
  const ownAi = ownPath !== path.replace(/\/+$/, '');
  for (const route of OWN_ROUTES) {
    if (route.method !== method) continue;
    if (ownAi && !route.ai) continue;
    const m = route.pattern.exec(ownPath);
    if (!m) continue;
    const parsed = parseJson(call.body, method);
    const reply = await route.handler({
      method,
      path,
      pathSegments,
      params: m.slice(1).map((p) => p ?? ''),
      json: parsed.json,
      badJson: parsed.bad,
      caller: call.caller,
      now: call.now,
      world,
      ai: ownAi,
    });
    return ownAi ? aiReply(reply, world.readings) : reply;
  }
  const endpoint = call.endpoint;
  if (!endpoint) return failure(404, STATUS.notFound, `Not Found: no endpoint ${method} ${path}.`);
  const special = SPECIAL_HANDLERS[endpoint.resultKind ?? 'generic'];
  const handler = special ?? HANDLERS[endpoint.mode];
  if (!handler) return failure(404, STATUS.notFound, `Not Found: ${method} ${path} is not emulated by the sandbox yet.`);
  const segs = endpoint.path.split('/');
  let tasks: unknown[] = [];
  if (method === 'POST') {
    const parsed = parseTasks(call.body);
    if (!Array.isArray(parsed)) return parsed;
    tasks = call.ai ? aiRequestDefaults(endpoint, parsed) : parsed;
  }
  const reply = await handler({
    endpoint,
    engine: segs[3] ?? '',
    type: segs[4] ?? '',
    base: functionBase(endpoint.path),
    ai: call.ai,
    ...(call.taskId === undefined ? {} : { taskId: call.taskId }),
    pathSegments,
    body: tasks,
    caller: call.caller,
    now: call.now,
    seed: world.seed,
    readyAfterMs: world.readyAfterMs,
    store: world.store,
    account: world.account,
    world,
  });
  return call.ai ? aiReply(reply, world.readings, endpoint) : reply;
}

/** Endpoints answered by their own handler whatever their mode (the on-page reads). */
const SPECIAL_HANDLERS: Partial<Record<ResultKind, Handler>> = {
  on_page_pages: handleOnPageRead,
  on_page_links: handleOnPageRead,
  on_page_resources: handleOnPageRead,
};

const V1_HANDLERS: Record<string, (ctx: V1Context) => HandlerReply> = {
  'v1.chat.completions': handleChat,
  'v1.chat.completions.image': handleImage,
  'v1.embeddings': handleEmbeddings,
};

function routeV1(world: SandboxWorld, call: CallInput): HandlerReply {
  const handler = call.endpoint && V1_HANDLERS[call.endpoint.id];
  if (!call.endpoint || !handler) return v1Error(404, 'not_found', `No endpoint ${call.method} ${call.path}.`, 'invalid_request_error');
  let body: unknown;
  try {
    body = call.body && call.body.length > 0 ? JSON.parse(call.body.toString('utf8')) : undefined;
  } catch {
    return v1Error(400, 'invalid_json', 'The body is not JSON.');
  }
  return handler({ endpoint: call.endpoint, body, caller: call.caller, now: call.now, world });
}

/** The body as a non-empty JSON array of tasks, or the 40503/40502 reply. */
export function parseTasks(body: Buffer | undefined): unknown[] | HandlerReply {
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

function parseJson(body: Buffer | undefined, method: string): { json: unknown; bad: boolean } {
  if (method !== 'POST') return { json: undefined, bad: false };
  if (body === undefined) return { json: undefined, bad: true };
  try {
    return { json: JSON.parse(body.toString('utf8')), bad: false };
  } catch {
    return { json: undefined, bad: true };
  }
}
