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
      'int_serp__daily_placements',
      'int_serp__domain_placements',
      'int_serp__first_seen',
      'rank_history',
      'share_of_serp_daily',
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
    // Incremental first-seen dates equal the ones a full rebuild gives.
    const firstSeen = `select keyword, location_code, language_code, device, engine, domain, first_seen_date::varchar as d from int_serp__first_seen order by all`;
    const incremental = await withWarehouse(dir, (wh) => wh.all(firstSeen));
    await runModels({ warehouseDir: dir, select: ['int_serp__first_seen'], fullRefresh: true });
    expect(await withWarehouse(dir, (wh) => wh.all(firstSeen))).toEqual(incremental);
    expect(incremental.length).toBeGreaterThan(0);
    expect(bad.ok).toBe(false);
    expect(bad.tests.filter((t) => t.status === 'failed').map((t) => t.model)).toContain('int_serp__domain_placements');

    // A full rebuild tests every row again (and sees the old duplicate, gone now that it is rebuilt from its sources).
    const again = await runModels({ warehouseDir: dir, test: true, fullRefresh: true });
    expect(again.tests.filter((t) => t.test.includes(' since cast('))).toEqual([]);
    expect(again.tests.find((t) => t.model === 'rank_history' && t.test.startsWith('unique('))?.status).toBe('passed');
  });

  it('a night with no new domain rebuilds and tests first-seen dates from the last check read, not from the newest first-seen date', async () => {
    const dir = tmp.dir;
    await withWarehouse(dir, (wh) => writeSyntheticHistory(wh, { ...shape, days: 3 }));
    expect((await runModels({ warehouseDir: dir, test: true })).ok).toBe(true);
    // A stable market: the next nights serve the same pages as the last one, so no domain is new.
    const sameNightAgain = (from: string, to: string) =>
      withWarehouse(dir, async (wh) => {
        const id = `'-' || '${to}'`;
        await wh.run(`insert into serp_results by name select * replace (task_id || ${id} as task_id, date '${to}' as check_date,
          checked_at + (date '${to}' - date '${from}') * interval 1 day as checked_at) from serp_results where check_date = date '${from}'`);
        await wh.run(`insert into serp_items by name select * replace (task_id || ${id} as task_id, date '${to}' as check_date)
          from serp_items where check_date = date '${from}'`);
        await wh.run(`insert into tasks by name select * replace (task_id || ${id} as task_id, tag || ${id} as tag)
          from tasks where task_id in (select task_id from serp_results where check_date = date '${from}')`);
      });
    await sameNightAgain('2025-01-03', '2025-01-04');
    expect((await runModels({ warehouseDir: dir, test: true })).ok).toBe(true);
    await sameNightAgain('2025-01-04', '2025-01-05');
    const night = await runModels({ warehouseDir: dir, test: true });
    expect(night.ok).toBe(true);
    const newest = await withWarehouse(dir, (wh) =>
      wh.all<{ d: string }>(`select max(first_seen_date)::varchar as d from int_serp__first_seen`),
    );
    expect(newest[0]!.d < '2025-01-04').toBe(true);
    expect(night.builds.find((b) => b.name === 'int_serp__first_seen')).toMatchObject({
      mode: 'incremental',
      since: `cast('2025-01-04' as DATE)`,
    });
    // The night's tests of the views over the loads start there too (the least of the rebuilt dates):
    // every test of stg_serp__items (unique, the two not_null, accepted_values).
    expect(night.tests.filter((t) => t.model === 'stg_serp__items').map((t) => t.test.replace(/^.* since /, ''))).toEqual(
      Array(4).fill(`cast('2025-01-04' as DATE)`),
    );
    // And the first-seen dates equal a full rebuild's.
    const firstSeen = `select keyword, domain, first_seen_date::varchar as d from int_serp__first_seen order by all`;
    const incremental = await withWarehouse(dir, (wh) => wh.all(firstSeen));
    await runModels({ warehouseDir: dir, select: ['int_serp__first_seen'], fullRefresh: true });
    expect(await withWarehouse(dir, (wh) => wh.all(firstSeen))).toEqual(incremental);
  });
});
