import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envelopeSchema } from '../../../src/client/index.js';
import {
  arrowSchema,
  exportParquet,
  loadIdempotent,
  normalizeSerpTask,
  serpItemsTable,
  serpResultsTable,
  Warehouse,
} from '../../../src/warehouse/index.js';

const fixture = async () =>
  envelopeSchema.parse(JSON.parse(await readFile(new URL('../../fixtures/serp.task_get.advanced.small.json', import.meta.url), 'utf8')));

describe('SERP normalizer and idempotent load (real DuckDB)', () => {
  let dir: string;
  let wh: Warehouse;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wh-'));
    wh = await Warehouse.open(dir);
  });
  afterEach(async () => {
    wh.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function load() {
    const task = (await fixture()).tasks![0]!;
    const { results, items } = normalizeSerpTask(task, { runId: 'run-1' });
    return loadIdempotent(wh, [
      { spec: serpResultsTable, table: results },
      { spec: serpItemsTable, table: items },
    ], async () => {});
  }

  it('produces Arrow tables with the declared schemas', async () => {
    const task = (await fixture()).tasks![0]!;
    const { results, items } = normalizeSerpTask(task, { runId: 'run-1' });
    const declared = arrowSchema(serpResultsTable).fields.map((f) => `${f.name}:${f.type}`);
    expect(results.schema.fields.map((f) => `${f.name}:${f.type}`)).toEqual(declared);
    expect(items.numRows).toBe(3);
    expect(String(items.schema.fields.find((f) => f.name === 'rank_absolute')!.type)).toBe('Int32');
  });

  it('loads typed rows and keeps every unknown field in extra', async () => {
    expect(await load()).toBe(4);
    const items = await wh.all<Record<string, unknown>>(`SELECT * FROM serp_items ORDER BY item_index`);
    expect(items.map((i) => i.type)).toEqual(['featured_snippet', 'organic', 'people_also_ask']);
    expect(items[1]).toMatchObject({ domain: 'nike.com', rank_group: 1, rank_absolute: 2, rating_value: 4.6, rating_votes_count: 1200n });
    expect(JSON.parse(items[0]!.extra as string)).toMatchObject({ featured_title: 'Top picks' });
    expect(JSON.parse(items[2]!.extra as string).items[0].title).toBe('Are trail shoes worth it?');
    const [r] = await wh.all<Record<string, unknown>>(
      `SELECT keyword, location_code, device, tag, se_results_count, item_types, check_date::VARCHAR AS d, checked_at::VARCHAR AS t, extra FROM serp_results`,
    );
    expect(r).toMatchObject({ keyword: 'trail running shoes', location_code: 2840, device: 'desktop', tag: 'abc123', se_results_count: 123000000n, d: '2026-11-20' });
    expect(r!.item_types).toEqual(['featured_snippet', 'organic', 'people_also_ask']);
    expect(String(r!.t)).toMatch(/^2026-11-20 08:15:02/);
    expect(JSON.parse(r!.extra as string)).toEqual({ a_new_result_field: { nested: true } });
  });

  it('changes nothing when the same body is loaded twice', async () => {
    await load();
    await load();
    const [c] = await wh.all<{ r: bigint; i: bigint }>(`SELECT (SELECT count(*) FROM serp_results) AS r, (SELECT count(*) FROM serp_items) AS i`);
    expect(c).toEqual({ r: 1n, i: 3n });
  });

  it('rolls the rows back when the task mark fails', async () => {
    const task = (await fixture()).tasks![0]!;
    const { results, items } = normalizeSerpTask(task, { runId: 'run-1' });
    await expect(
      loadIdempotent(wh, [{ spec: serpResultsTable, table: results }, { spec: serpItemsTable, table: items }], async () => {
        throw new Error('mark failed');
      }),
    ).rejects.toThrow('mark failed');
    const [c] = await wh.all<{ n: bigint }>(`SELECT count(*) AS n FROM serp_items`);
    expect(c!.n).toBe(0n);
  });

  it('writes Hive-partitioned Parquet that DuckDB reads back', async () => {
    await load();
    await exportParquet(wh);
    const rows = await wh.all<{ n: bigint; date: string }>(
      `SELECT count(*) AS n, date::VARCHAR AS date FROM read_parquet('${join(dir, 'parquet/serp_items/*/*.parquet')}', hive_partitioning = true) GROUP BY date`,
    );
    expect(rows).toEqual([{ n: 3n, date: '2026-11-20' }]);
  });
});
