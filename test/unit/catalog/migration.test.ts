import { describe, expect, it } from 'vitest';
import { migrateV2, V2_FUNCTIONS } from '../../../src/catalog/index.js';
import { EtlError } from '../../../src/errors.js';

describe('v2 → v3 migration help', () => {
  it('maps every function of the table to catalog endpoints', () => {
    for (const name of Object.keys(V2_FUNCTIONS)) {
      const m = migrateV2(name);
      expect(
        m.endpoints.map((e) => e.path),
        name,
      ).toEqual(m.paths);
    }
  });

  it('translates a function name in any spelling, with a warning', () => {
    const m = migrateV2('live_extended-SERP');
    expect(m.paths).toEqual(['/v3/serp/engA/organic/live/advanced']);
    expect(m.warning).toMatch(/v2 function.*\/v3\/serp\/engA\/organic\/live\/advanced/);
    expect(migrateV2('Search volume').endpoints.map((e) => e.id)).toEqual([
      'keywords_data.engA_ads.search_volume.live',
      'keywords_data.engA_ads.search_volume.task_post',
      'keywords_data.engA_ads.search_volume.tasks_ready',
      'keywords_data.engA_ads.search_volume.task_get',
    ]);
  });

  it('translates a /v2 path that has a v3 twin', () => {
    const m = migrateV2('/v2/svc_labs/engA/ranked_keywords/live/');
    expect(m.endpoints[0]!.id).toBe('svc_labs.engA.ranked_keywords.live');
    expect(m.warning).toMatch(/use \/v3\/svc_labs\/engA\/ranked_keywords\/live/);
  });

  it('fails a removed function with the replacement the spec names', () => {
    const err = (() => {
      try {
        migrateV2('keywords by category');
      } catch (e) {
        return e as EtlError;
      }
    })();
    expect(err?.code).toBe('ETL_REQUEST_INVALID');
    expect(err?.message).toContain('/v3/svc_labs/engA/keywords_for_categories/live');
    expect(() => migrateV2('Ad traffic by platform')).toThrow(/no replacement/);
    expect(() => migrateV2('teleport')).toThrow(/neither a v2 function/);
  });

  it('accepts the spec\'s row "Marketplace products and ASIN" under that name (issue 16, point 12)', () => {
    const m = migrateV2('Marketplace products and ASIN');
    expect(m.paths).toEqual([
      '/v3/merchant/amazon/products/task_post',
      '/v3/merchant/amazon/products/tasks_ready',
      '/v3/merchant/amazon/products/task_get/advanced/{id}',
      '/v3/merchant/amazon/products/task_get/html/{id}',
      '/v3/merchant/amazon/asin/task_post',
      '/v3/merchant/amazon/asin/tasks_ready',
      '/v3/merchant/amazon/asin/task_get/advanced/{id}',
    ]);
    expect(migrateV2('marketplace_products_and_asin').paths).toEqual(m.paths);
  });
});
