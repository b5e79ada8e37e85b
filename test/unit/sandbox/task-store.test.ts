import { describe, expect, it } from 'vitest';
import { SandboxAccount } from '../../../src/sandbox/account.js';
import { DEFAULT_READINGS } from '../../../src/sandbox/readings.js';
import { doneTaskObject } from '../../../src/sandbox/task-result.js';
import { RESULTS_KEPT, TaskStore, type StoredTask } from '../../../src/sandbox/task-store.js';

const DAY = Date.parse('2026-03-01T02:00:00Z');

function task(i: number): StoredTask {
  const params = { keyword: `task store keyword ${i}`, location_code: 2840, language_code: 'en', depth: 100 };
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    key: 'k',
    api: 'serp',
    fn: 'task_post',
    endpointId: 'serp.engA.organic.task_post',
    postPath: '/v3/serp/engA/organic/task_post',
    base: '/v3/serp/engA/organic',
    engine: 'engA',
    type: 'organic',
    postedAtMs: DAY,
    readyAtMs: DAY + 1000,
    params,
    data: { api: 'serp', function: 'task_post', se: 'engA', se_type: 'organic', ...params },
    tag: null,
    callback: false,
    callbacksSupported: true,
    priceUnits: 0,
    chargedUnits: 0,
    costMicros: 0,
    collected: false,
  };
}

/** What `task_get` answers for a task, as the handler does it: the task object, then the store told it moved on. */
function fetch(store: TaskStore, t: StoredTask): string {
  const done = doneTaskObject(1, t, 'advanced', ['v3', 'serp'], DAY + 5000, new SandboxAccount(0), DEFAULT_READINGS);
  t.collected = true;
  store.touch(t);
  return JSON.stringify(done);
}

describe('TaskStore: built results in bounded memory', () => {
  it('holds at most RESULTS_KEPT results by default', () => {
    expect(RESULTS_KEPT).toBeGreaterThan(0);
    expect(RESULTS_KEPT).toBeLessThanOrEqual(2_000);
  });

  it('lets the oldest built results go past the bound, and a task let go answers the same when fetched again', () => {
    const store = new TaskStore({ resultsKept: 2 });
    const tasks = [1, 2, 3, 4].map(task);
    for (const t of tasks) store.add(t);
    const first = tasks.map((t) => fetch(store, t));
    expect(store.resultsHeld).toBe(2);
    expect(tasks.map((t) => t.result !== undefined)).toEqual([false, false, true, true]);
    // Rebuilt from the seed and the task as posted: the same content, and now among the kept.
    expect(fetch(store, tasks[0]!)).toBe(first[0]);
    expect(store.resultsHeld).toBe(2);
    expect(tasks.map((t) => t.result !== undefined)).toEqual([true, false, false, true]);
    expect(fetch(store, tasks[1]!)).toBe(first[1]);
    expect(first[0]).not.toBe(first[1]);
  });

  it('counts a result handed in with the task (a live task) among the kept', () => {
    const store = new TaskStore({ resultsKept: 1 });
    const [a, b] = [task(5), task(6)];
    store.add({ ...a, result: [], resultAtMs: a.readyAtMs });
    store.add({ ...b, result: [], resultAtMs: b.readyAtMs });
    expect(store.resultsHeld).toBe(1);
  });
});
