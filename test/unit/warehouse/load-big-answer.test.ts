import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadLanded, reindexRaw, replay, type Warehouse } from '../../../src/warehouse/index.js';
import { compactFixture, land, response, tempWarehouse } from './helpers.js';

const task = (n: string) => `11111111-2222-4333-8444-${n}`;
const SERP = (n: string) => `/v3/serp/engA/organic/task_get/advanced/${task(n)}`;

/** A SERP answer for task `n` whose first item's description is `bytes` long. */
async function answer(n: string, bytes: number): Promise<string> {
  const env = JSON.parse(await compactFixture('serp.task_get.advanced.small.json'));
  env.tasks[0].id = task(n);
  env.tasks[0].result[0].items[0].description = 'é'.repeat(bytes / 2);
  return JSON.stringify(env);
}

/** Each task's first item: the length of its description. */
function firstItems(wh: Warehouse): Promise<unknown[]> {
  return wh.all(`SELECT task_id, length(description)::BIGINT AS n FROM serp_items WHERE item_index = 0 ORDER BY task_id`);
}

// DuckDB's read_json refuses a line over about 32 MB at its default maximum_object_size: such a
// paid answer was reported as an unreadable file, never loaded, and its task fetched again each run.
describe('an answer larger than DuckDB reads by default (40 MB)', () => {
  let wh: Warehouse;
  let done: () => Promise<void>;
  beforeEach(async () => {
    ({ wh, done } = await tempWarehouse());
  });
  afterEach(async () => done());

  it('is loaded beside the others, and rebuilt from the raw landing alone', async () => {
    const big = 40 << 20;
    const ids = await land(wh, response(SERP('000000000001'), await answer('000000000001', big)), response(SERP('000000000002'), await answer('000000000002', 100)));
    const report = await loadLanded(wh, { taskIds: [task('000000000001'), task('000000000002')] });
    expect(report.skippedFiles).toEqual([]);
    expect([...report.picked.keys()].sort()).toEqual([task('000000000001'), task('000000000002')]);
    const loaded = [
      { task_id: task('000000000001'), n: BigInt(big / 2) },
      { task_id: task('000000000002'), n: 50n },
    ];
    expect(await firstItems(wh)).toEqual(loaded);
    expect(ids).toHaveLength(2);

    // The database lost its index: the raw files alone give the same rows.
    await wh.run(`DELETE FROM raw_responses`);
    await wh.run(`DELETE FROM serp_items`);
    expect(await reindexRaw(wh)).toBe(2);
    const replayed = await replay(wh);
    expect(replayed.skippedFiles).toEqual([]);
    expect(await firstItems(wh)).toEqual(loaded);
  }, 120_000);
});
