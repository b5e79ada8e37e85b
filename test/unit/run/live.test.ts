import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { settleLive } from '../../../src/post/live-calls.js';
import { RunStore, type Warehouse } from '../../../src/warehouse/index.js';
import { compactFixture, land, response, tearRawFile, tempWarehouse } from '../warehouse/helpers.js';

const LIVE = 'serp.engA.organic.live.advanced';
const ID = (n: number) => `11111111-2222-4333-8444-00000000000${n}`;

describe('settleLive (real DuckDB, real landing)', () => {
  let wh: Warehouse;
  let dir: string;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, dir, done } = await tempWarehouse()));
  afterEach(async () => done());

  it('collects a live task whose landed answer loads, and marks failed, with why, one whose landed file cannot be read', async () => {
    const store = new RunStore(wh, 'run-1');
    const at = new Date('2026-11-20T08:59:00Z');
    const tags = [1, 2, 3].map((n) => `t${n}`);
    await store.recordPlanned(
      tags.map((tag, i) => ({ tag, job: 'j', endpointId: LIVE, batchNo: i, spec: { keyword: tag } })),
      at,
    );
    await store.recordPosted(
      tags.map((tag, i) => ({ tag, taskId: ID(i + 1), ok: true, statusCode: 20000, message: 'Ok.' })),
      at,
    );
    // Tasks 1 and 2 answered and landed; task 3's answer never arrived.
    const calls: string[] = [];
    for (const n of [1, 2]) {
      const env = JSON.parse(await compactFixture('serp.task_get.advanced.small.json'));
      env.tasks[0].id = ID(n);
      calls.push(...(await land(wh, response('/v3/serp/engA/organic/live/advanced', JSON.stringify(env)))));
    }
    // Task 2's landed file is torn (its last 20 bytes gone).
    const file = await tearRawFile(wh, dir, calls[1]!);

    const r = await settleLive({ wh, store, runId: 'run-1', at: new Date('2026-11-20T09:01:00Z'), isLive: (id) => id === LIVE });
    expect(r).toMatchObject({ loaded: 1, unloadable: 1, lost: 1 });
    expect(r.why).toContain(file);
    const tasks = await wh.all<{ task_id: string; state: string; rows_loaded: number | null; status_message: string | null }>(
      `SELECT task_id, state, rows_loaded, status_message FROM tasks ORDER BY task_id`,
    );
    expect(tasks.map((t) => [t.task_id, t.state])).toEqual([
      [ID(1), 'collected'],
      [ID(2), 'failed'],
      [ID(3), 'failed'],
    ]);
    // Task 1's rows, and only its: rows_loaded counts them in both tables.
    const count = async (t: string) =>
      await wh.all<{ task_id: string; n: number }>(`SELECT task_id, count(*)::INT AS n FROM ${t} GROUP BY ALL`);
    const [items, results] = [await count('serp_items'), await count('serp_results')];
    expect(items.map((x) => x.task_id)).toEqual([ID(1)]);
    expect(results).toEqual([{ task_id: ID(1), n: 1 }]);
    expect(tasks[0]!.rows_loaded).toBe(items[0]!.n + 1);
    expect(items[0]!.n).toBeGreaterThan(0);
    expect(tasks[1]!.status_message).toContain('could not be loaded');
    expect(tasks[1]!.status_message).toContain(file);
    expect(tasks[2]!.status_message).toContain('never arrived');
  });
});
