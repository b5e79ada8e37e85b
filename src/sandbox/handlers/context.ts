import type { Endpoint } from '../spec/index.js';
import type { SandboxAccount } from '../account.js';
import type { Caller } from '../auth.js';
import type { EnvelopeTask, Status } from '../envelope.js';
import type { TaskStore } from '../task-store.js';
import type { SandboxWorld } from '../world.js';

/** What the server hands an endpoint-table route handler: the matched endpoint, the caller and the world. */
export interface HandlerContext {
  endpoint: Endpoint;
  /** Engine and type read from the endpoint path, e.g. `engA` and `organic`. */
  engine: string;
  type: string;
  taskId?: string;
  /** The function's path without the lifecycle suffix (function-base.ts). */
  base: string;
  /** The request carried the `.ai` suffix. */
  ai: boolean;
  /** Segments of the requested path, as the envelope's `path` field reports them. */
  pathSegments: string[];
  /** The POST body, already checked to be a non-empty JSON array. */
  body: unknown[];
  caller: Caller;
  now: Date;
  seed: number;
  readyAfterMs: number;
  store: TaskStore;
  account: SandboxAccount;
  world: SandboxWorld;
}

/** What a handler answers; the server wraps it in the envelope and the charge headers. */
export interface HandlerReply {
  http: number;
  status?: Status;
  message?: string;
  tasks: EnvelopeTask[];
  /** CNY units actually debited (0 for sandbox keys and free calls). */
  chargedUnits: number;
  /** Raw USD cost in micro-dollars (the body's `cost`, also `X-Svc-Cost-USD`). */
  costMicros: number;
  /** A body sent as is instead of the /v3 envelope (the `/v1` endpoints, `.ai` answers). */
  json?: unknown;
  /** A body that is not JSON, sent as is with its content type (a `/v1` chat stream's server-sent events). */
  raw?: { contentType: string; text: string };
  /** Extra response headers (e.g. `Retry-After`). */
  headers?: Record<string, string>;
}

/** A handler of an endpoint of the table (spec/endpoints.ts). */
export type Handler = (ctx: HandlerContext) => HandlerReply | Promise<HandlerReply>;

/** What the server hands a handler of a path the emulator serves on its own (utilities, `/v1`). */
export interface RouteContext {
  method: string;
  path: string;
  pathSegments: string[];
  /** Capture groups of the route's pattern. */
  params: string[];
  /** POST body parsed as JSON (any shape), or undefined for GET and unreadable bodies. */
  json: unknown;
  /** True when a POST body was sent but is not JSON. */
  badJson: boolean;
  caller: Caller;
  now: Date;
  world: SandboxWorld;
  /** The path carried the `.ai` suffix. */
  ai: boolean;
}

/** A handler of a route of its own. */
export type RouteHandler = (ctx: RouteContext) => HandlerReply | Promise<HandlerReply>;

/** A reply with no tasks and no charge. */
export function failure(http: number, status: Status, message?: string): HandlerReply {
  return { http, status, ...(message === undefined ? {} : { message }), tasks: [], chargedUnits: 0, costMicros: 0 };
}
