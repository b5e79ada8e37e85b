import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSyntheticHistory } from '../../bench/lib/measure-incremental.js';
import { runModels, testWarehouseModels } from '../../src/models/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

// A night's model tests read the rows the night built (an incremental model from the date it
// rebuilt from; views over nightly loads with a date_key likewise), so a year of history is not
// scanned every night; a full rebuild and `pipeline models test` test every row.

const shape = { keywords: 4, days: 6, depth: 10 };

describe('model tests of a nightly build (real DuckDB)', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => (tmp = await tempDir('models-night-')));
  afterEach(async () => tmp.cleanup());

  it('test the night incrementally, and every row on a full rebuild or `models test`', async () => {
    const dir = tmp.dir;
    await withWarehouse(dir, (wh) => writeSyntheticHistory(wh, shape));
    const full = await runModels({ warehouseDir: dir, test: true });
    expect(full.ok).toBe(true);
    expect(full.tests.filter((t) => t.test.includes(' since cast('))).toEqual([]);

    // A row the night does not touch breaks a test: an old day of rank_history gets a duplicate.
    await withWarehouse(dir, async (wh) => {
      await wh.run(`insert into rank_history select * from rank_history where check_date = date '2025-01-02' limit 1`);
      await writeSyntheticHistory(wh, { ...shape, days: 1 }, shape.days);
    });
    const night = await runModels({ warehouseDir: dir, test: true });
    expect(night.builds.find((b) => b.name === 'rank_history')).toMatchObject({ mode: 'incremental', since: `cast('2025-01-06' as DATE)` });
    // Scoped: the incremental marts from the day they rebuilt from, the views with a date_key too.
    const scoped = new Set(night.tests.filter((t) => t.test.includes(' since cast(')).map((t) => t.model));
    expect([...scoped].sort()).toEqual([
      'domain_visibility_daily',
      'int_serp__daily_checks',
      'int_serp__domain_placements',
      'int_serp__first_seen',
      'rank_history',
      'stg_serp__items',
      'stg_serp__results',
    ]);
    expect(night.tests.filter((t) => t.model === 'rank_history').every((t) => t.test.endsWith(" since cast('2025-01-06' as DATE)"))).toBe(
      true,
    );
    expect(night.ok).toBe(true);
    // The whole table, as `pipeline models test` reads it, has the old duplicate.
    const all = await testWarehouseModels({ warehouseDir: dir, select: ['rank_history'] });
    expect(all.find((t) => t.test.startsWith('unique('))).toMatchObject({ status: 'failed', failures: 1 });

    // A broken row of the night is caught by the night's tests.
    await withWarehouse(dir, (wh) => writeSyntheticHistory(wh, { ...shape, days: 1 }, shape.days + 1));
    await withWarehouse(dir, (wh) =>
      wh.run(`update serp_items set rank_absolute = 0 where check_date = date '2025-01-08' and item_index = 0 and task_id = 't7-0'`),
    );
    const bad = await runModels({ warehouseDir: dir, test: true });
    expect(bad.ok).toBe(false);
    expect(bad.tests.filter((t) => t.status === 'failed').map((t) => t.model)).toContain('int_serp__domain_placements');

    // A full rebuild tests every row again (and sees the old duplicate, gone now that it is rebuilt from its sources).
    const again = await runModels({ warehouseDir: dir, test: true, fullRefresh: true });
    expect(again.tests.filter((t) => t.test.includes(' since cast('))).toEqual([]);
    expect(again.tests.find((t) => t.model === 'rank_history' && t.test.startsWith('unique('))?.status).toBe('passed');
  });
});
