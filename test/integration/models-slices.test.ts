import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildModels, discoverModels } from '../../src/models/index.js';
import { formatBuild } from '../../src/models/format-results.js';
import { renderTemplate } from '../../src/models/render-sql.js';
import { withWarehouse, type Warehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

// A model built in slices (sidecar `slices`): each pass keeps the rows of its `{{ in_slice(...) }}`,
// and the passes together must give the rows one pass gives, in every materialization and strategy.

const SQL = `select distinct k, d, sum(v) over (partition by k, d) as total, count(*) over (partition by k, d) as n
from facts
where {{ in_slice(k) }}
{% if is_incremental %}and d >= {{ incremental_since }}{% endif %}
`;

/** 60 keys over the given days; each key's total of a day needs every row of that key and day, in its pass. */
async function seed(w: Warehouse, days: readonly string[]): Promise<void> {
  await w.run(`create table if not exists facts (k varchar, d date, v integer)`);
  const list = `[${days.map((d) => `'${d}'`).join(', ')}]`;
  await w.run(
    `insert into facts select 'key ' || k, d::date, k * 10 + i from range(60) r(k), (select unnest(${list}) as d, generate_subscripts(${list}, 1) as i)`,
  );
}

const rowsOf = (w: Warehouse, table: string) =>
  w.all(`select k, d::varchar as d, total::int as total, n::int as n from ${table} order by k, d`);

describe('a model built in slices', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    tmp = await tempDir('pipeline-models-slices-');
  });
  afterEach(async () => tmp.cleanup());

  async function project(sidecar: string, sql = SQL): Promise<string> {
    const dir = join(tmp.dir, `sql-${Math.random().toString(36).slice(2)}`);
    await mkdir(join(dir, 'marts'), { recursive: true });
    await writeFile(join(dir, 'marts', 'running.sql'), sql);
    await writeFile(join(dir, 'marts', 'running.yml'), `grain: one row per key and day\n${sidecar}`);
    return dir;
  }

  it('splits the rows into disjoint passes that together are all of them', async () => {
    await withWarehouse(join(tmp.dir, 'wh'), async (w) => {
      await seed(w, ['2026-01-01', '2026-01-02']);
      const counts: number[] = [];
      for (let index = 0; index < 3; index++) {
        const sql = renderTemplate(SQL, { slice: { index, count: 3 } });
        expect(sql).toContain(`(hash(k) % 3 = ${index})`);
        const [{ n }] = (await w.all<{ n: number }>(`select count(*)::int as n from (${sql})`)) as [{ n: number }];
        counts.push(n);
      }
      // Every pass has rows of its own (60 keys), and no row is in two.
      expect(counts.every((n) => n > 0 && n < 120)).toBe(true);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(120);
      expect(renderTemplate(SQL, {})).toContain('where true');
    });
  });

  for (const sidecar of [
    'materialized: table\nslices:\n  count: 3\n',
    'materialized: incremental\nslices:\n  count: 3\nincremental:\n  key: d\n  strategy: delete_insert\n',
    'materialized: incremental\nslices:\n  count: 3\nincremental:\n  key: d\n',
  ]) {
    it(`gives the rows of a build in one pass (${sidecar.replace(/\n\s*/g, ' ').trim()})`, async () => {
      const sliced = await discoverModels(await project(sidecar));
      const whole = await discoverModels(await project(sidecar.replace('slices:\n  count: 3\n', '')));
      expect(sliced[0]!.sidecar.slices).toEqual({ count: 3 });
      for (const [name, models] of [
        ['sliced', sliced],
        ['whole', whole],
      ] as const) {
        await withWarehouse(join(tmp.dir, name), async (w) => {
          await seed(w, ['2026-01-01', '2026-01-02', '2026-01-03']);
          const [first] = await buildModels(w, models);
          expect(first).toMatchObject({ status: 'built', mode: 'full', rows: 180 });
          expect(first!.passes).toBe(name === 'sliced' ? 3 : undefined);
          expect(formatBuild(first!)).toContain(name === 'sliced' ? 'ms, 3 passes)' : ' ms)');
          // A later row of the last built day and a new day: an incremental build starts at the last built day.
          await seed(w, ['2026-01-03', '2026-01-04']);
          const [second] = await buildModels(w, models);
          expect(second).toMatchObject({ status: 'built' });
        });
      }
      const rows = await withWarehouse(join(tmp.dir, 'sliced'), (w) => rowsOf(w, 'running'));
      expect(rows).toHaveLength(240);
      expect(rows).toEqual(await withWarehouse(join(tmp.dir, 'whole'), (w) => rowsOf(w, 'running')));
      // As a full build in one pass has them: key 7's third day holds two rows (73 and 71).
      const full = await withWarehouse(join(tmp.dir, 'whole'), async (w) => {
        await buildModels(w, whole, { fullRefresh: true });
        return rowsOf(w, 'running');
      });
      expect(rows).toEqual(full);
      expect(rows.filter((r) => (r as { k: string }).k === 'key 7')).toEqual([
        { k: 'key 7', d: '2026-01-01', total: 71, n: 1 },
        { k: 'key 7', d: '2026-01-02', total: 72, n: 1 },
        { k: 'key 7', d: '2026-01-03', total: 144, n: 2 },
        { k: 'key 7', d: '2026-01-04', total: 72, n: 1 },
      ]);
    });
  }

  it("is sliced only past `above` rows of `rows_of`, from the rebuild's start for an incremental build", async () => {
    const models = await discoverModels(
      await project(
        'materialized: incremental\nslices:\n  count: 3\n  rows_of: facts\n  above: 100\nincremental:\n  key: d\n  strategy: delete_insert\n',
      ),
    );
    await withWarehouse(join(tmp.dir, 'wh'), async (w) => {
      await seed(w, ['2026-01-01', '2026-01-02']);
      // 120 rows of facts: past 100, in three passes.
      expect(await buildModels(w, models)).toMatchObject([{ status: 'built', mode: 'full', rows: 120, passes: 3 }]);
      // The rebuild starts at the last built day: 60 + 60 rows of facts from it on, past 100 again.
      await seed(w, ['2026-01-03']);
      expect(await buildModels(w, models)).toMatchObject([{ status: 'built', mode: 'incremental', rows: 120, passes: 3 }]);
      // From the third day on, 60 rows and a fourth day of 30: 90, not past 100, in one pass.
      await w.run(`insert into facts select 'key ' || k, '2026-01-04', 1 from range(30) r(k)`);
      const [small] = await buildModels(w, models);
      expect(small).toMatchObject({ status: 'built', mode: 'incremental', rows: 90 });
      expect(small!.passes).toBeUndefined();
      expect(await rowsOf(w, 'running')).toHaveLength(60 * 3 + 30);
    });
  });

  it('refuses slices on a view, on SQL without {{ in_slice(...) }}, or measured by a relation it does not read, naming the sidecar and what to do', async () => {
    const sliced = (more = '') => `slices:\n  count: 2\n${more}`;
    await expect(discoverModels(await project(`materialized: view\n${sliced()}`))).rejects.toThrow(
      /running.*slices.count: 2.*only a table or an incremental model/,
    );
    await expect(discoverModels(await project(`materialized: table\n${sliced()}`, 'select 1 as k'))).rejects.toThrow(
      /slices.count: 2.*no \{\{ in_slice/,
    );
    await expect(discoverModels(await project('materialized: table\nslices:\n  count: 1\n'))).rejects.toThrow(/slices/);
    await expect(discoverModels(await project(`materialized: table\n${sliced('  above: 10\n')}`))).rejects.toThrow(
      /rows_of and above go together/,
    );
    await expect(discoverModels(await project(`materialized: table\n${sliced('  rows_of: things\n  above: 10\n')}`))).rejects.toThrow(
      /slices.rows_of: things, which it never reads/,
    );
  });
});
