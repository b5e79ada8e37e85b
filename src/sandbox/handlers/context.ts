import type { Endpoint } from '../../catalog/index.js';
import type { SandboxAccount } from '../account.js';
import type { Caller } from '../auth.js';
import type { EnvelopeTask, Status } from '../envelope.js';
import type { TaskStore } from '../task-store.js';

/** What the server hands a route handler: the matched endpoint, the caller and the world. */
export interface HandlerContext {
  endpoint: Endpoint;
  /** Engine and type read from the endpoint path, e.g. `engA` and `organic`. */
  engine: string;
  type: string;
  taskId?: string;
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
}
