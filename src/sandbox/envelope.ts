import { randomUUID } from 'node:crypto';
import { usdNumber } from './money.js';

/** The API version string the emulator reports in every envelope. */
export const API_VERSION = '0.1.20261121';

/** Status codes the emulator uses, with the service's messages (result-shapes.md). */
export const STATUS = {
  ok: { code: 20000, message: 'Ok.' },
  created: { code: 20100, message: 'Task Created.' },
  oneTaskAtATime: { code: 40000, message: 'You can set only one task at a time.' },
  tooManyTasks: { code: 40006, message: 'You can set no more than 100 tasks at a time.' },
  unauthorized: { code: 40100, message: 'You are not authorized to access this resource.' },
  paymentRequired: { code: 40200, message: 'Payment Required.' },
  notFound: { code: 40400, message: 'Not Found.' },
  taskNotFound: { code: 40401, message: 'Task Not Found.' },
  invalidField: { code: 40501, message: 'Invalid Field.' },
  postEmpty: { code: 40502, message: 'POST Data Is Empty.' },
  postInvalid: { code: 40503, message: 'POST data is invalid.' },
  unknownFields: { code: 40506, message: 'Unknown Fields.' },
  inQueue: { code: 40602, message: 'Task In Queue.' },
  internal: { code: 50000, message: 'Internal Error.' },
} as const;

/** One status: a code and the message the service sends with it. */
export interface Status {
  code: number;
  message: string;
}

/** `tasks[]` of the envelope. */
export interface EnvelopeTask {
  id: string;
  status_code: number;
  status_message: string;
  time: string;
  cost: number;
  result_count: number;
  path: string[];
  data: Record<string, unknown>;
  result: unknown[] | null;
}

/** The common /v3 response envelope. */
export interface Envelope {
  version: string;
  status_code: number;
  status_message: string;
  time: string;
  cost: number;
  tasks_count: number;
  tasks_error: number;
  tasks: EnvelopeTask[];
}

/** `0.0123 sec.`, the service's way of writing durations. */
export function formatSeconds(ms: number): string {
  return `${(Math.max(0, ms) / 1000).toFixed(4)} sec.`;
}

/** A task object; `id` defaults to a fresh UUID, `costMicros` to 0. */
export function makeTask(opts: {
  status: Status;
  path: string[];
  data: Record<string, unknown>;
  result?: unknown[] | null;
  id?: string;
  costMicros?: number;
  message?: string;
  elapsedMs?: number;
}): EnvelopeTask {
  const result = opts.result ?? null;
  return {
    id: opts.id ?? randomUUID(),
    status_code: opts.status.code,
    status_message: opts.message ?? opts.status.message,
    time: formatSeconds(opts.elapsedMs ?? 0),
    cost: usdNumber(opts.costMicros ?? 0),
    result_count: result ? result.length : 0,
    path: opts.path,
    data: opts.data,
    result,
  };
}

/** Whether a task status counts as success under the spec's success rule. */
export function isTaskSuccess(code: number): boolean {
  return code === STATUS.ok.code || code === STATUS.created.code;
}

/** Wraps tasks in the envelope; `tasks_error` counts every non-success task. */
export function makeEnvelope(opts: {
  status?: Status;
  message?: string;
  tasks: EnvelopeTask[];
  costMicros: number;
  elapsedMs: number;
}): Envelope {
  const status = opts.status ?? STATUS.ok;
  return {
    version: API_VERSION,
    status_code: status.code,
    status_message: opts.message ?? status.message,
    time: formatSeconds(opts.elapsedMs),
    cost: usdNumber(opts.costMicros),
    tasks_count: opts.tasks.length,
    tasks_error: opts.tasks.filter((t) => !isTaskSuccess(t.status_code)).length,
    tasks: opts.tasks,
  };
}
