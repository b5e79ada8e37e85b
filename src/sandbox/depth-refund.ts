import { endpointById, type Endpoint } from './spec/index.js';
import type { SandboxAccount } from './account.js';
import { buildResults } from './data/results.js';
import { cnyUnitsToUsdMicros } from './money.js';
import { taskPriceUnits } from './pricing.js';
import type { ServedReadings } from './readings.js';
import type { StoredTask, TaskStore } from './task-store.js';

/**
 * CNY units to give back when a SERP task returned fewer organic results than its
 * `depth`: the price at the asked depth minus the price at the depth served (spec:
 * "if fewer results are returned than depth, the difference is refunded").
 */
export function unusedDepthUnits(
  endpoint: Endpoint,
  params: Record<string, unknown>,
  mode: 'standard' | 'live',
  results: unknown[],
  /** The served `extraDepthPrice` reading: the refund is at the price the task was charged. */
  extraFraction: number,
): number {
  if (endpoint.api !== 'serp' || !endpoint.charged) return 0;
  const depth = typeof params.depth === 'number' ? params.depth : 10;
  const first = results[0] as { items?: Array<{ type?: string }> } | undefined;
  if (!first?.items) return 0;
  const served = first.items.filter((i) => i.type === 'organic').length;
  if (served >= depth) return 0;
  const at = (depth: number | unknown) => taskPriceUnits(endpoint, { ...params, depth }, mode, extraFraction);
  return Math.max(0, at(params.depth) - at(Math.max(1, served)));
}

/**
 * Completes a standard task: its result is built for the moment it was done (and kept, so
 * every fetch and postback carries the same content), and the depth it did not serve is
 * refunded to the balance now, whether or not the task is ever collected. Its `cost` from
 * then on is the net cost: what the client sees of the refund (task_get, postback), under the
 * default reading `refunds: 'task-cost'`; under `'balance'` the `cost` stays the gross price
 * and the refund shows only in the balance (readings.ts). Done once per task; a re-parse
 * later rebuilds the content, never the refund.
 */
export function completeTask(seed: number, task: StoredTask, account: SandboxAccount, readings: ServedReadings): void {
  if (task.completed) return;
  task.completed = true;
  const endpoint = endpointById(task.endpointId);
  if (task.result === undefined) {
    task.result = buildResults({
      seed,
      endpoint,
      params: task.params,
      at: new Date(task.readyAtMs),
      drift: task.drift ?? 0,
      ...(task.rankProfiles ? { rankProfiles: task.rankProfiles } : {}),
    });
    task.resultAtMs = task.readyAtMs;
    task.resultText = undefined;
  }
  const unused = Math.min(
    task.priceUnits,
    unusedDepthUnits(endpoint, task.params, 'standard', task.result as unknown[], readings.extraDepthPrice),
  );
  if (unused <= 0) return;
  const back = Math.min(task.chargedUnits, unused);
  account.refund(back);
  task.chargedUnits -= back;
  if (readings.refunds === 'task-cost') task.netCostMicros = cnyUnitsToUsdMicros(task.priceUnits - unused);
}

/**
 * The emulator's completion queue, checked on every call (and by the callback poll): every
 * charged task that may be refunded and is done by `nowMs` is completed, so the balance a
 * client reads (`X-Svc-Balance-CNY`, `user_data`) already holds the refund of a task it has
 * not fetched.
 */
export function completeDueTasks(seed: number, store: TaskStore, account: SandboxAccount, nowMs: number, readings: ServedReadings): void {
  for (const task of store.dueCompletions(nowMs)) {
    completeTask(seed, task, account, readings);
    store.touch(task);
  }
}

/** Whether a task may be refunded (a charged SERP task deeper than the base page): only those wait in the queue. */
export function mayBeRefunded(endpoint: Endpoint, params: Record<string, unknown>, chargedUnits: number): boolean {
  return chargedUnits > 0 && endpoint.api === 'serp' && typeof params.depth === 'number' && params.depth > 10;
}
