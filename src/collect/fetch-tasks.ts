import type { Endpoint } from '../catalog/index.js';
import type { CallResult, EnvelopeTask, ServiceClient } from '../client/index.js';

/** Task codes that mean "not done yet, ask again later". */
export const NOT_READY = new Set([40601, 40602]);

export interface Fetched {
  /** Tasks answered with their result, each body landed by the client (`callId`: the call that landed it). */
  done: (EnvelopeTask & { callId: string })[];
  /** Tasks the service answered with an error of their own. */
  failed: { id: string; statusCode: number; message: string }[];
  /** The error that stopped the fetching, after `done` and `failed` were gathered. */
  failure?: unknown;
}

/**
 * Fetches tasks one by one with `task_get` (free). Every body is landed by the client
 * before it is read here; an error stops the fetching and is returned with what was
 * fetched before it, so the caller loads that first.
 */
export async function fetchTasks(client: ServiceClient, get: Endpoint, ids: readonly string[], signal?: AbortSignal): Promise<Fetched> {
  const out: Fetched = { done: [], failed: [] };
  const calls: PromiseSettledResult<CallResult>[] = [];
  for (const id of ids) {
    if (signal?.aborted) break;
    try {
      calls.push({ status: 'fulfilled', value: await client.call(get, { taskId: id }) });
    } catch (reason) {
      calls.push({ status: 'rejected', reason });
      break;
    }
  }
  for (const [i, settled] of calls.entries()) {
    const id = ids[i]!;
    if (settled.status === 'rejected') {
      out.failure ??= settled.reason;
      continue;
    }
    const call = settled.value;
    const task = call.envelope.tasks?.[0];
    const verdict = call.outcome.tasks[0];
    if (!task || !verdict || NOT_READY.has(verdict.statusCode)) continue;
    if (!verdict.ok) out.failed.push({ id, statusCode: verdict.statusCode, message: verdict.message });
    else out.done.push({ ...task, id: task.id ?? id, callId: call.callId });
  }
  return out;
}
