import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSyntheticHistory } from '../../bench/lib/measure-incremental.js';
import { runModels } from '../../src/models/index.js';
import { publishStep } from '../../src/run/publish-step.js';
import { withWarehouse, type Warehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

// A night back-filled before the last one published, then `pipeline models run --full-refresh`
// (what the README says to do): the rebuilt marts change days the publish had already written,
// and BI tools reading parquet/ must see the rebuild, not the marts as they were.

const shape = { keywords: 4, days: 4, depth: 10, start: '2025-01-02' };

/** A mart as its table holds it and as its published Parquet does, day by day. */
async function byDay(wh: Warehouse, table: string): Promise<{ table: unknown[]; parquet: unknown[] }> {
  const q = (from: string) =>
    `SELECT check_date::VARCHAR AS d, count(*)::INT AS n, sum(hash(domain, rank_absolute))::VARCHAR AS h FROM ${from} GROUP BY 1 ORDER BY 1`;
  return {
    table: await wh.all(q(table)),
    parquet: await wh.all(q(`read_parquet('${wh.dir}/parquet/${table}/*/*.parquet', hive_partitioning = false, union_by_name = true)`)),
  };
}

describe('publish after a full refresh of the models', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => (tmp = await tempDir('publish-refresh-')));
  afterEach(async () => tmp.cleanup());

  it('rewrites every partition of a mart rebuilt in full, so parquet/ equals the table again', async () => {
    const dir = tmp.dir;
    await withWarehouse(dir, (wh) => writeSyntheticHistory(wh, shape));
    expect((await runModels({ warehouseDir: dir })).ok).toBe(true);
    await withWarehouse(dir, (wh) => publishStep(wh, () => new Date()));
    // A night the service had missed, back-filled the day before the first one.
    await withWarehouse(dir, (wh) => writeSyntheticHistory(wh, { ...shape, days: 1 }, -1));
    const rebuilt = await runModels({ warehouseDir: dir, fullRefresh: true });
    expect(rebuilt.builds.find((b) => b.name === 'rank_history')).toMatchObject({ mode: 'full' });
    await withWarehouse(dir, (wh) => publishStep(wh, () => new Date()));
    const rank = await withWarehouse(dir, (wh) => byDay(wh, 'rank_history'));
    expect(rank.table.map((r) => (r as { d: string }).d)).toEqual(['2025-01-01', '2025-01-02', '2025-01-03', '2025-01-04', '2025-01-05']);
    expect(rank.parquet).toEqual(rank.table);
    const visibility = await withWarehouse(dir, (wh) =>
      wh.all(`SELECT (SELECT count(*) FROM domain_visibility_daily)::INT AS t,
                     (SELECT count(*) FROM read_parquet('${dir}/parquet/domain_visibility_daily/*/*.parquet', union_by_name = true))::INT AS p`),
    );
    expect(visibility).toEqual([{ t: expect.any(Number), p: (visibility[0] as { t: number }).t }]);

    // A later incremental night publishes only its own days, as before.
    await withWarehouse(dir, (wh) => writeSyntheticHistory(wh, { ...shape, days: 1 }, shape.days));
    const night = await runModels({ warehouseDir: dir });
    expect(night.builds.find((b) => b.name === 'rank_history')).toMatchObject({ mode: 'incremental' });
    const published = await withWarehouse(dir, (wh) => publishStep(wh, () => new Date()));
    const after = await withWarehouse(dir, (wh) => byDay(wh, 'rank_history'));
    expect(after.parquet).toEqual(after.table);
    expect(published.files).toBeLessThan(10);
  });
});
