import type { ResultFormat } from '../catalog/index.js';
import { makeTask, STATUS, type EnvelopeTask } from './envelope.js';
import { serpFormats } from './serp-formats.js';
import type { SerpParams } from './serp-query.js';
import { buildSerpResult } from './serp-result.js';
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

/**
 * The `task_get` task object of a done task: the result is built once for the day the
 * task finished and kept (a re-parse rebuilds it once, for the day of the fix), so every
 * fetch and every postback of a task carries the same content.
 */
export function doneTaskObject(seed: number, task: StoredTask, format: ResultFormat | undefined, pathSegments: string[], nowMs: number): EnvelopeTask {
  const atMs = task.fixedAtMs !== undefined && task.fixedAtMs <= nowMs ? task.fixedAtMs : task.readyAtMs;
  if (task.result === undefined || task.resultAtMs !== atMs) {
    task.result = buildSerpResult({ seed, engine: task.engine, params: task.params as SerpParams, at: new Date(atMs) });
    task.resultAtMs = atMs;
  }
  const data = { ...task.data, function: 'task_get' };
  return makeTask({
    id: task.id,
    status: STATUS.ok,
    path: pathSegments,
    data,
    costMicros: task.costMicros,
    result: [formatSerp(format, task.result as SerpAdvancedResult)],
  });
}
