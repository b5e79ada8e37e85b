import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatTests, runModels } from '../../src/models/index.js';
import { loadLanded, Warehouse, withWarehouse } from '../../src/warehouse/index.js';
import { compactFixture, land, response } from '../unit/warehouse/helpers.js';

const FIXTURE = 'serp.task_get.advanced.published-shapes.json';
const PATH = '/v3/serp/engA/organic/task_get/advanced/5d1f0c4e-2b6a-4c1d-9e3f-7a8b9c0d1e2f';
type Json = any; // the fixture is read field by field

/**
 * A SERP body made of result-shapes.md's published item shapes (every type it lists), with
 * what real bodies hold and the emulator did not serve until now: numbers as strings (a
 * rank, a rating, the results count), one key with two types in one body (rank_group),
 * four date formats, and an item type the published shapes do not list (local_services).
 */
describe('published real SERP shapes through the loader and the models', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pipeline-published-'));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('lands every item, warns about the unseen type with its count, passes the model tests and places it as non-organic', async () => {
    const text = await compactFixture(FIXTURE);
    const served: Json[] = JSON.parse(text).tasks[0].result[0].items;
    const wh = await Warehouse.open(dir);
    try {
      await loadLanded(wh, { callIds: await land(wh, response(PATH, text)) });
    } finally {
      wh.close();
    }

    const models = await runModels({ warehouseDir: dir, test: true });
    expect(models.builds.filter((b) => b.status === 'failed')).toEqual([]);
    expect(models.tests.filter((t) => t.status === 'failed' || t.status === 'error')).toEqual([]);
    expect(models.ok).toBe(true);
    const warned = models.tests.filter((t) => t.status === 'warned');
    expect(warned).toEqual([
      {
        model: 'stg_serp__items',
        test: 'accepted_values(item_type)',
        status: 'warned',
        failures: 1,
        sample: [{ item_type: 'local_services', rows: 2n }],
      },
    ]);
    expect(formatTests(models.tests)).toMatch(
      /^WARN\s+stg_serp__items: accepted_values\(item_type\)\s+\(1 offending rows\)\n\s+\{"item_type":"local_services","rows":2\}$/m,
    );
    expect(formatTests(models.tests)).toMatch(/tests, 0 failed, 1 warned\n$/);
    // every type of the published shapes is accepted: only the unseen one is warned about
    expect(new Set(served.map((i) => i.type)).size).toBe(12);

    await withWarehouse(dir, async (db) => {
      // every item lands, in order, with its type; numbers written as strings land as numbers
      const items = await db.all<Json>(
        `select item_index, type, rank_group, rank_absolute, rating_value, rating_votes_count, timestamp from serp_items order by item_index`,
      );
      expect(items.map((i) => [i.item_index, i.type])).toEqual(served.map((s, n) => [n, s.type]));
      expect(items[6]).toMatchObject({ type: 'organic', rank_group: 2, rank_absolute: 7, timestamp: '2025-10-30T08:15:00Z' });
      expect(items[4]).toMatchObject({ rating_value: 4.6, rating_votes_count: 120n, timestamp: '2025-10-28' });
      expect(items[8]).toMatchObject({ type: 'local_services', rating_value: 4.9 });
      const [result] = await db.all<Json>(`select se_results_count, check_date::varchar as day, items_count from serp_results`);
      expect(result).toEqual({ se_results_count: 2340000n, day: '2025-11-02', items_count: 16 });
      const topStories = await db.all<Json>(`select items from serp_items where type = 'top_stories'`);
      expect(JSON.parse(topStories[0].items)[0].timestamp).toBe('2025-11-02 08-00-00 +00:00');

      // the marts: the unseen type is a non-organic placement, kept with its rank
      const history = await db.all<Json>(`select domain, item_type, is_organic, rank_absolute from rank_history order by rank_absolute`);
      expect(history).toEqual([
        { domain: 'example-guide.com', item_type: 'featured_snippet', is_organic: false, rank_absolute: 3 },
        { domain: 'trailhead.example', item_type: 'organic', is_organic: true, rank_absolute: 5 },
        { domain: 'peak-outfitters.example', item_type: 'local_pack', is_organic: false, rank_absolute: 6 },
        { domain: 'runnerclub.org', item_type: 'organic', is_organic: true, rank_absolute: 7 },
        { domain: 'local-pros.example', item_type: 'local_services', is_organic: false, rank_absolute: 9 },
        { domain: 'fixit.example', item_type: 'local_services', is_organic: false, rank_absolute: 14 },
        { domain: 'mountain-mag.example', item_type: 'organic', is_organic: true, rank_absolute: 15 },
      ]);
    });
  });

  it('dates a result without datetime by the day it was received, and warns of an item without type: the night passes', async () => {
    // result-shapes.md: every field can be missing or null. The answer came on 2026-11-20.
    const body = JSON.parse(await compactFixture(FIXTURE));
    const result = body.tasks[0].result[0];
    delete result.datetime;
    delete result.items[1].type;
    const wh = await Warehouse.open(dir);
    try {
      await loadLanded(wh, {
        callIds: await land(wh, response(PATH, JSON.stringify(body), { receivedAt: new Date('2026-11-20T23:30:00Z') })),
      });
    } finally {
      wh.close();
    }

    const models = await runModels({ warehouseDir: dir, test: true });
    expect(models.tests.filter((t) => t.status === 'failed' || t.status === 'error')).toEqual([]);
    expect(models.ok).toBe(true);
    expect(models.tests.filter((t) => t.status === 'warned').map((t) => [t.test, t.failures])).toEqual([
      ['not_null(item_type)', 1],
      ['accepted_values(item_type)', 1],
    ]);

    await withWarehouse(dir, async (db) => {
      const days = await db.all<Json>(
        `select 'results' as t, check_date::varchar as day, count(*)::int as n from serp_results group by all
         union all select 'items', check_date::varchar, count(*)::int from serp_items group by all order by t`,
      );
      expect(days).toEqual([
        { t: 'items', day: '2026-11-20', n: result.items.length },
        { t: 'results', day: '2026-11-20', n: 1 },
      ]);
      const [untyped] = await db.all<Json>(`select type, domain from serp_items where item_index = 1`);
      expect(untyped).toEqual({ type: null, domain: result.items[1].domain ?? null });
      // The day is the data's: the marts place the check on it.
      const [history] = await db.all<Json>(`select min(check_date)::varchar as lo, max(check_date)::varchar as hi from rank_history`);
      expect(history).toEqual({ lo: '2026-11-20', hi: '2026-11-20' });
    });
  });
});
