import type { ServedReadings } from './readings.js';
import { endpointById, type ResultFormat } from './spec/index.js';
import type { SandboxAccount } from './account.js';
import { buildResults } from './data/results.js';
import { completeTask } from './depth-refund.js';
import { RawJson } from './raw-json.js';
import { makeTask, STATUS, type EnvelopeTask } from './envelope.js';
import { serpFormats } from './serp-formats.js';
import type { SerpAdvancedResult } from './serp-types.js';
import type { StoredTask } from './task-store.js';

/** A SERP result in the requested `task_get` format. */
export function formatSerp(format: ResultFormat | undefined, result: SerpAdvancedResult): unknown {
  switch (format) {
    case 'regular':
      return serpFormats.regular(result);
    case 'html':
      return serpFormats.html(result);
    default:
      return result;
  }
}

/** A result array in a format: SERP results are reshaped, other families answer as built. */
export function formatResults(api: string, format: ResultFormat | undefined, results: unknown[]): unknown[] {
  return api === 'serp' ? results.map((r) => formatSerp(format, r as SerpAdvancedResult)) : results;
}

/**
 * The `task_get` task object of a done task: the result is built for the day the task
 * finished (after a re-parse, for the day of the fix) from the seed and the task as posted, and
 * held while the store keeps it (task-store.ts RESULTS_KEPT), so every fetch and every postback
 * of a task carries the same content. The task is completed first
 * if the completion queue has not done it yet (its unused depth refunded to `account`), and
 * its `cost` is the net cost: how a client sees a refund (the spec does not say; see
 * depth-refund.ts).
 */
export function doneTaskObject(
  seed: number,
  task: StoredTask,
  format: ResultFormat | undefined,
  pathSegments: string[],
  nowMs: number,
  account: SandboxAccount,
  /** The served readings: how a refund shows (`refunds`) and the block price it is counted at (`extraDepthPrice`). */
  readings: ServedReadings,
  /** Answer the result as cached JSON text (only for bodies written by the server's stringifyWithRaw). */
  raw = false,
): EnvelopeTask {
  completeTask(seed, task, account, readings);
  const atMs = task.fixedAtMs !== undefined && task.fixedAtMs <= nowMs ? task.fixedAtMs : task.readyAtMs;
  if (task.resultAtMs !== atMs) {
    task.result = buildResults({
      seed,
      endpoint: endpointById(task.endpointId),
      params: task.params,
      at: new Date(atMs),
      drift: task.drift ?? 0,
      ...(task.rankProfiles ? { rankProfiles: task.rankProfiles } : {}),
    });
    task.resultAtMs = atMs;
    task.resultText = undefined;
  }
  const data = { ...task.data, function: 'task_get' };
  let result = formatResults(task.api, format, task.result as unknown[]);
  if (raw) {
    task.resultText ??= new Map();
    const key = format ?? '';
    let text = task.resultText.get(key);
    if (text === undefined) {
      text = JSON.stringify(result);
      task.resultText.set(key, text);
    }
    result = new RawArray(text, result.length) as unknown as unknown[];
  }
  return makeTask({ id: task.id, status: STATUS.ok, path: pathSegments, data, costMicros: task.netCostMicros ?? task.costMicros, result });
}

/** A result array kept as JSON text, with its length for `result_count`. */
class RawArray extends RawJson {
  constructor(
    text: string,
    readonly length: number,
  ) {
    super(text);
  }
}
