/**
 * Conformance, black box: the published result shapes of result-shapes.md that state a rule
 * (ranks, forms, counts, lower-casing, months). "Every field can be missing or null", so fields
 * are checked where present; the relations between them are checked always. The emulator runs
 * with --drift 0: drift serves the irregular forms real bodies have, which the loader handles
 * and this suite does not judge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, succeeded, type Emulator, type Json } from './emulator.js';

let e: Emulator;
beforeAll(async () => {
  e = await startEmulator(['--time-scale', '60', '--no-rate-limits', '--drift', '0']);
});
afterAll(() => e?.stop());

const present = (v: unknown) => v !== undefined && v !== null;

describe('SERP organic task_get/advanced (and live/advanced) result', () => {
  let res: Json;
  beforeAll(async () => {
    const r = await e.call('POST', '/v3/serp/engA/organic/live/advanced', {
      body: [{ keyword: 'Trail Running Shoes', location_code: 2840, language_code: 'en', depth: 30 }],
    });
    expect(succeeded(r)).toBe(true);
    res = r.body.tasks[0].result[0];
  });

  it('"`type: \\"organic\\"`, ... `datetime: \\"yyyy-mm-dd hh:mm:ss +00:00\\"`, `item_types: string[]`, `items_count`, `items`"', () => {
    expect(res.type).toBe('organic');
    if (present(res.datetime)) expect(res.datetime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+00:00$/);
    expect(res.items_count).toBe(res.items.length);
    const types = new Set((res.items as Json[]).map((i) => i.type));
    for (const t of types) expect(res.item_types).toContain(t);
  });

  it('"`rank_absolute` (among all items)": 1, 2, 3, ... in order', () => {
    expect((res.items as Json[]).map((i) => i.rank_absolute)).toEqual(res.items.map((_: unknown, i: number) => i + 1));
  });

  it('"`rank_group` (rank among items of its type)": 1, 2, 3, ... within each type', () => {
    const seen = new Map<string, number>();
    for (const i of res.items as Json[]) {
      const n = (seen.get(i.type) ?? 0) + 1;
      seen.set(i.type, n);
      expect(i.rank_group, `${i.type} #${n}`).toBe(n);
    }
  });

  it('"`position` (\\"left\\"|\\"right\\")", "`xpath`" on every item', () => {
    for (const i of res.items as Json[]) {
      if (present(i.position)) expect(['left', 'right']).toContain(i.position);
      if (present(i.xpath)) expect(typeof i.xpath).toBe('string');
    }
  });

  it('`organic` items: "`domain`, `title`, `url`" strings; "`highlighted: string[]`"', () => {
    const organic = (res.items as Json[]).filter((i) => i.type === 'organic');
    expect(organic.length).toBeGreaterThan(0);
    for (const o of organic) {
      for (const k of ['domain', 'title', 'url']) if (present(o[k])) expect(typeof o[k]).toBe('string');
      if (present(o.highlighted)) expect(o.highlighted.every((h: unknown) => typeof h === 'string')).toBe(true);
    }
  });
});

describe('Keywords data engA_ads/search_volume result', () => {
  let result: Json[];
  beforeAll(async () => {
    const r = await e.call('POST', '/v3/keywords_data/engA_ads/search_volume/live', {
      body: [{ keywords: ['Trail Shoes', 'RAIN boots'], location_code: 2840, language_code: 'en' }],
    });
    expect(succeeded(r)).toBe(true);
    result = r.body.tasks[0].result;
  });

  it('"`result[]` (one object per keyword, no `items`)"; "`keyword (lower-cased)`"', () => {
    expect(result.map((x) => x.keyword).sort()).toEqual(['rain boots', 'trail shoes']);
    for (const x of result) expect('items' in x).toBe(false);
  });

  it('"`competition: \\"LOW\\"|\\"MEDIUM\\"|\\"HIGH\\"|null`, `competition_index: 0-100 | null`"', () => {
    for (const x of result) {
      if (present(x.competition)) expect(['LOW', 'MEDIUM', 'HIGH']).toContain(x.competition);
      if (present(x.competition_index)) {
        expect(x.competition_index).toBeGreaterThanOrEqual(0);
        expect(x.competition_index).toBeLessThanOrEqual(100);
      }
    }
  });

  it('"Twelve months by default, the current month never included."', () => {
    const now = new Date();
    for (const x of result) {
      if (!present(x.monthly_searches)) continue;
      expect(x.monthly_searches).toHaveLength(12);
      for (const m of x.monthly_searches) {
        expect(m.year === now.getUTCFullYear() && m.month === now.getUTCMonth() + 1).toBe(false);
      }
    }
  });
});

describe('Labs ranked_keywords and related_keywords results', () => {
  it('ranked_keywords `result[0]`: "`{se_type, target, ..., total_count, items_count, metrics: {organic: M, paid: M}, items[]}`"', async () => {
    const r = await e.call('POST', '/v3/svc_labs/engA/ranked_keywords/live', {
      body: [{ target: 'shop.example', location_code: 2840, language_code: 'en' }],
    });
    const x = r.body.tasks[0].result[0];
    expect(x.target).toBe('shop.example');
    expect(x.items_count).toBe(x.items.length);
    for (const k of ['organic', 'paid']) {
      const m = x.metrics[k];
      for (const b of ['pos_1', 'pos_2_3', 'pos_4_10', 'pos_11_20', 'pos_91_100', 'count'])
        if (present(m[b])) expect(typeof m[b]).toBe('number');
    }
    for (const it of x.items as Json[]) {
      expect(typeof it.keyword_data.keyword).toBe('string');
      expect(typeof it.ranked_serp_element).toBe('object');
    }
  });

  it('related_keywords `result[0]`: "`{seed_keyword, ..., items_count, items: {keyword_data: KD, depth, related_keywords: string[]}[]}`"', async () => {
    const r = await e.call('POST', '/v3/svc_labs/engA/related_keywords/live', {
      body: [{ keyword: 'trail shoes', location_code: 2840, language_code: 'en' }],
    });
    const x = r.body.tasks[0].result[0];
    expect(x.seed_keyword).toBe('trail shoes');
    expect(x.items_count).toBe(x.items.length);
    for (const it of x.items as Json[]) {
      expect(typeof it.keyword_data.keyword).toBe('string');
      if (present(it.related_keywords)) expect(it.related_keywords.every((k: unknown) => typeof k === 'string')).toBe(true);
    }
  });
});
