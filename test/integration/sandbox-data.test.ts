import { describe, expect, it } from 'vitest';
import { ENDPOINTS, endpointPath } from '../../src/catalog/index.js';
import { harness, LIVE_KEY, type Json } from './sandbox-harness.js';

const SV = '/v3/keywords_data/engA_ads/search_volume';

describe('sandbox: keywords data', () => {
  it('runs search_volume through task_post, the keywords-data ready list and task_get/{id}, 700 keywords a task', async () => {
    const { call, advance } = await harness();
    const keywords = Array.from({ length: 700 }, (_, i) => `Running Shoes ${i}`);
    const post = await call('POST', `${SV}/task_post`, {
      body: [
        { keywords, location_code: 2840, language_code: 'en', tag: 'sv1' },
        { keywords: [...keywords, 'one more'], location_code: 2840 },
      ],
    });
    expect(post.body.tasks.map((t: Json) => t.status_code)).toEqual([20100, 40501]);
    expect(post.body.tasks[1].status_message).toMatch(/700/);
    const id = post.body.tasks[0].id;
    advance(300);
    const ready = (await call('GET', `${SV}/tasks_ready`)).body.tasks[0].result;
    expect(ready).toEqual([
      {
        id,
        se: 'engA_ads',
        function: 'search_volume',
        date_posted: expect.stringMatching(/\+00:00$/),
        tag: 'sv1',
        endpoint: `${SV}/task_get/${id}`,
      },
    ]);
    const got = await call('GET', `${SV}/task_get/${id}`);
    const result = got.body.tasks[0].result;
    expect(result).toHaveLength(700);
    expect(result[0].keyword).toBe('running shoes 0');
    expect(result[0]).toMatchObject({
      location_code: 2840,
      language_code: 'en',
      search_partners: false,
      competition: expect.stringMatching(/^(LOW|MEDIUM|HIGH)$/),
    });
    const months = result[0].monthly_searches;
    expect(months).toHaveLength(12);
    expect(months[0]).toEqual({ year: 2026, month: 2, search_volume: expect.any(Number) }); // the current month (March) never included
    expect(months[11]).toMatchObject({ year: 2025, month: 3 });
    expect((await call('GET', `${SV}/tasks_ready`)).body.tasks[0].result).toEqual([]);
  });

  it('is seasonal: a summer keyword peaks in summer, a holiday-shopping keyword in November-December', async () => {
    const { call } = await harness();
    const r = await call('POST', `${SV}/live`, { body: [{ keywords: ['beach vacation', 'buy gift deals'], location_code: 2840 }] });
    const [beach, gifts] = r.body.tasks[0].result;
    const at = (k: Json, m: number) => k.monthly_searches.find((x: Json) => x.month === m).search_volume;
    expect(at(beach, 7)).toBeGreaterThan(at(beach, 1) * 1.5);
    expect(at(gifts, 11)).toBeGreaterThan(at(gifts, 5) * 1.5);
  });

  it('fails a whole task with 40501 for a prohibited keyword, uncharged, and charges live above standard', async () => {
    const { call } = await harness();
    const bad = await call('POST', `${SV}/task_post`, {
      key: LIVE_KEY,
      body: [{ keywords: ['shoes', 'xxx videos'], location_code: 2840 }],
    });
    expect(bad.body.tasks[0].status_code).toBe(40501);
    expect(bad.body.tasks[0].status_message).toMatch(/prohibited/);
    expect(bad.headers['x-svc-charge-cny']).toBe('0.0000');
    const std = await call('POST', `${SV}/task_post`, { key: LIVE_KEY, body: [{ keywords: ['shoes'], location_code: 2840 }] });
    const live = await call('POST', `${SV}/live`, { key: LIVE_KEY, body: [{ keywords: ['shoes'], location_code: 2840 }] });
    expect(Number(live.headers['x-svc-charge-cny'])).toBeGreaterThan(Number(std.headers['x-svc-charge-cny']));
    const many = await call('POST', `${SV}/task_post`, {
      key: LIVE_KEY,
      body: [{ keywords: Array.from({ length: 700 }, (_, i) => `k${i}`), location_code: 2840 }],
    });
    expect(many.headers['x-svc-charge-cny']).toBe(std.headers['x-svc-charge-cny']); // 700 keywords at equal price
  });

  it('answers keywords_for_site, keywords_for_keywords and ad_traffic_by_keywords with plausible records', async () => {
    const { call } = await harness();
    const site = (await call('POST', '/v3/keywords_data/engA_ads/keywords_for_site/live', { body: [{ target: 'runnersworld.com' }] })).body
      .tasks[0];
    expect(site.status_code).toBe(20000);
    expect(site.result.length).toBeGreaterThan(5);
    expect(site.result.every((k: Json) => k.keyword.includes('runnersworld'))).toBe(true);
    const kk = (await call('POST', '/v3/keywords_data/engA_ads/keywords_for_keywords/live', { body: [{ keywords: ['yoga mat'] }] })).body
      .tasks[0].result;
    expect(kk.map((k: Json) => k.keyword)).toContain('yoga mat');
    expect(kk.length).toBeGreaterThan(5);
    const ad = (
      await call('POST', '/v3/keywords_data/engA_ads/ad_traffic_by_keywords/live', { body: [{ keywords: ['yoga mat'], bid: 2 }] })
    ).body.tasks[0].result[0];
    expect(ad.clicks).toBe(Math.round(ad.impressions * ad.ctr));
    expect(ad.average_cpc).toBeLessThanOrEqual(2);
  });

  it('compares up to 5 keywords in trends, on a 0-100 scale', async () => {
    const { call } = await harness();
    const body = (n: number) => [
      { keywords: Array.from({ length: n }, (_, i) => `topic ${i}`), location_code: 2840, date_from: '2025-03-01', date_to: '2026-03-01' },
    ];
    const six = await call('POST', '/v3/keywords_data/svc_trends/explore/live', { body: body(6) });
    expect(six.body.tasks[0].status_code).toBe(40501);
    const five = (await call('POST', '/v3/keywords_data/svc_trends/explore/live', { body: body(5) })).body.tasks[0].result[0];
    const graph = five.items[0];
    expect(graph.type).toBe('trends_graph');
    expect(graph.data.length).toBeGreaterThan(50);
    const values = graph.data.flatMap((d: Json) => d.values);
    expect(Math.max(...values)).toBeLessThanOrEqual(100);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    const merged = (await call('POST', '/v3/keywords_data/svc_trends/merged_data/live', { body: body(2) })).body.tasks[0].result[0];
    expect(merged.items.map((i: Json) => i.type)).toEqual(['trends_graph', 'trends_map', 'demography']);
  });
});

describe('sandbox: labs', () => {
  it('ranks a pool domain for its topic keywords, with the result-shapes fields and consistent metrics', async () => {
    const { call } = await harness();
    const r = (
      await call('POST', '/v3/svc_labs/engA/ranked_keywords/live', { body: [{ target: 'runnersworld.com', location_code: 2840 }] })
    ).body.tasks[0].result[0];
    expect(r.target).toBe('runnersworld.com');
    expect(r.items.length).toBeGreaterThan(3);
    const ranks = r.items.map((i: Json) => i.ranked_serp_element.serp_item.rank_group);
    expect(ranks).toEqual([...ranks].sort((a: number, b: number) => a - b));
    expect(r.metrics.organic.count).toBe(r.total_count);
    const item = r.items[0];
    expect(item.keyword_data.keyword_info).toMatchObject({
      search_volume: expect.any(Number),
      competition: expect.any(Number),
      monthly_searches: expect.any(Array),
    });
    expect(item.keyword_data.search_intent_info.main_intent).toBeTruthy();
    expect(typeof item.ranked_serp_element.se_results_count).toBe('string');
    expect(item.ranked_serp_element.serp_item.main_domain).toBe('runnersworld.com');
  });

  it('lists related keywords with depth and their own related lists', async () => {
    const { call } = await harness();
    const r = (
      await call('POST', '/v3/svc_labs/engA/related_keywords/live', {
        body: [{ keyword: 'trail running shoes', location_code: 2840, depth: 2 }],
      })
    ).body.tasks[0].result[0];
    expect(r.seed_keyword).toBe('trail running shoes');
    expect(new Set(r.items.map((i: Json) => i.depth))).toEqual(new Set([1, 2]));
    expect(r.items[0].related_keywords.length).toBeGreaterThan(0);
    expect(r.items_count).toBe(r.items.length);
  });
});

describe('sandbox: every catalog endpoint is routed', () => {
  it('answers each endpoint of the catalog with something other than "not emulated", but the images formats the mapping row does not name', async () => {
    const { call } = await harness();
    const missing: string[] = [];
    for (const e of ENDPOINTS) {
      const path = e.path.includes('{')
        ? endpointPath(e, e.path.includes('{country_code}') ? { country_code: 'us' } : '11111111-2222-4333-8444-555555555555')
        : e.path;
      const init = e.method === 'POST' ? { body: e.api === 'v1' ? { model: 'x' } : [{}] } : {};
      const r = await call(e.method, path, init);
      if (r.status === 404 || r.body?.status_code === 40400) missing.push(`${e.method} ${path}`);
    }
    // Versioning 6: "Images | ... `task_get/advanced/`" only; the client's catalog assumes organic's formats (READINGS.imageFormats).
    const id = '11111111-2222-4333-8444-555555555555';
    expect(missing).toEqual([
      `GET /v3/serp/engA/images/task_get/regular/${id}`,
      `GET /v3/serp/engA/images/task_get/html/${id}`,
      'POST /v3/serp/engA/images/live/regular',
    ]);
  });
});

describe('sandbox: other data families', () => {
  it('serves live backlinks, domain analytics, content analysis and lighthouse results', async () => {
    const { call } = await harness();
    const cases: Array<[string, Json, (r: Json) => void]> = [
      [
        '/v3/backlinks/referring_domains/live',
        { target: 'example.org' },
        (r) => expect(r.items[0]).toMatchObject({ type: 'backlinks_referring_domain', domain: expect.any(String) }),
      ],
      ['/v3/domain_analytics/technologies/aggregation_technologies/live', {}, (r) => expect(r.items[0].domains_count).toBeGreaterThan(0)],
      ['/v3/content_analysis/search/live', { keyword: 'coffee' }, (r) => expect(r.items[0].content_info.title).toMatch(/coffee/)],
      ['/v3/on_page/lighthouse/live/json', { url: 'https://example.org/' }, (r) => expect(r.lighthouseVersion).toBe('12.6.1')],
    ];
    for (const [path, task, check] of cases) {
      const r = await call('POST', path, { body: [task] });
      expect(r.body.tasks[0].status_code, path).toBe(20000);
      check(r.body.tasks[0].result[0]);
    }
  });

  it('runs merchant, app data, business data and reviews through the task lifecycle', async () => {
    const { call, advance } = await harness();
    const bases = [
      '/v3/merchant/engA/products',
      '/v3/merchant/amazon/asin',
      '/v3/app_data/engA/app_searches',
      '/v3/business_data/engA/hotel_info',
      '/v3/reviews/engA',
    ];
    const ids = [];
    for (const b of bases)
      ids.push(
        (await call('POST', `${b}/task_post`, { body: [{ keyword: 'espresso machine', location_code: 2840, depth: 5 }] })).body.tasks[0].id,
      );
    advance(300);
    for (const [i, b] of bases.entries()) {
      const ready = (await call('GET', `${b}/tasks_ready`)).body.tasks[0].result;
      expect(
        ready.map((t: Json) => t.id),
        b,
      ).toEqual([ids[i]]);
      const path = ready[0].endpoint_advanced ?? ready[0].endpoint;
      const got = await call('GET', path);
      expect(got.body.tasks[0].status_code, b).toBe(20000);
      expect(got.body.tasks[0].result[0].items).toHaveLength(5);
    }
  });
});
