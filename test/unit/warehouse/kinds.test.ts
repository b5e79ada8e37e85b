import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DECLARED_TABLES, kindOfPath, loadLanded, sqlType, type Warehouse } from '../../../src/warehouse/index.js';
import { compactFixture, land, response, tempWarehouse } from './helpers.js';

/** One golden case: a hand-written fixture landed under its path, and rows it must give. */
interface Golden {
  fixture: string;
  path: string;
  kind: string;
  rows: { sql: string; expect: Record<string, unknown>[] }[];
}

const GOLDEN: Golden[] = [
  {
    fixture: 'serp.task_get.advanced.small.json',
    path: '/v3/serp/engA/organic/task_get/advanced/11111111-2222-4333-8444-555555555555',
    kind: 'serp',
    rows: [
      { sql: `SELECT keyword, location_code, device, tag, se_results_count, check_date::VARCHAR AS d, a_new_result_field__nested AS n FROM serp_results`, expect: [{ keyword: 'trail running shoes', location_code: 2840, device: 'desktop', tag: 'abc123', se_results_count: 123000000n, d: '2026-11-20', n: true }] },
      { sql: `SELECT item_index, type, domain, rating_value, rating_votes_count, highlighted, featured_title, items->>'$[0].title' AS q FROM serp_items ORDER BY item_index`, expect: [
        { item_index: 0, type: 'featured_snippet', domain: 'www.runnersworld.com', rating_value: null, rating_votes_count: null, highlighted: null, featured_title: 'Top picks', q: null },
        { item_index: 1, type: 'organic', domain: 'nike.com', rating_value: 4.6, rating_votes_count: 1200n, highlighted: ['trail', 'shoes'], featured_title: null, q: null },
        { item_index: 2, type: 'people_also_ask', domain: null, rating_value: null, rating_votes_count: null, highlighted: null, featured_title: null, q: 'Are trail shoes worth it?' },
      ] },
    ],
  },
  {
    fixture: 'keywords_data.search_volume.live.mixed.json',
    path: '/v3/keywords_data/engA_ads/search_volume/live',
    kind: 'search_volume',
    rows: [
      { sql: `SELECT keyword, search_volume, competition, cpc, tag FROM search_volume ORDER BY result_index`, expect: [
        { keyword: 'trail shoes', search_volume: 74000n, competition: 'HIGH', cpc: 1.42, tag: 'sv-1' },
        { keyword: 'running socks', search_volume: null, competition: null, cpc: null, tag: 'sv-1' },
      ] },
      { sql: `SELECT keyword, year, month, search_volume FROM search_volume_monthly ORDER BY month_index`, expect: [
        { keyword: 'trail shoes', year: 2026, month: 10, search_volume: 81000n },
        { keyword: 'trail shoes', year: 2026, month: 9, search_volume: 66000n },
      ] },
      { sql: `SELECT result_index, concepts_index, name FROM search_volume__keyword_annotations__concepts`, expect: [{ result_index: 0, concepts_index: 0, name: 'shoes' }] },
    ],
  },
  {
    fixture: 'keywords_data.keywords_for_site.task_get.basic.json',
    path: '/v3/keywords_data/engA_ads/keywords_for_site/task_get/22222222-0000-4000-8000-000000000002',
    kind: 'ads_keywords',
    rows: [
      { sql: `SELECT function, target, keyword, search_volume FROM ads_keywords`, expect: [{ function: 'keywords_for_site', target: 'nike.com', keyword: 'nike trail', search_volume: 12100n }] },
      { sql: `SELECT keyword, month, search_volume FROM ads_keywords_monthly`, expect: [{ keyword: 'nike trail', month: 10, search_volume: 12000n }] },
    ],
  },
  {
    fixture: 'keywords_data.svc_trends.explore.live.basic.json',
    path: '/v3/keywords_data/svc_trends/explore/live',
    kind: 'trends',
    rows: [
      { sql: `SELECT function, keywords, items_count, check_date::VARCHAR AS d FROM trends_results`, expect: [{ function: 'explore', keywords: ['trail shoes', 'hiking boots'], items_count: 2, d: '2026-11-20' }] },
      { sql: `SELECT type, averages, data->>'$[0].date_from' AS f, data->>'$.age[0].keyword' AS a FROM trends_items ORDER BY item_index`, expect: [
        { type: 'svc_trends_graph', averages: [71n, 40n], f: '2026-11-01', a: null },
        { type: 'demography', averages: null, f: null, a: 'trail shoes' },
      ] },
    ],
  },
  {
    fixture: 'svc_labs.ranked_keywords.live.basic.json',
    path: '/v3/svc_labs/engA/ranked_keywords/live',
    kind: 'labs_ranked_keywords',
    rows: [
      { sql: `SELECT target, total_count, metrics_organic->>'pos_1' AS p1 FROM labs_ranked_keywords_targets`, expect: [{ target: 'nike.com', total_count: 51234n, p1: '1200' }] },
      { sql: `SELECT target, keyword, search_volume, competition, categories, keyword_difficulty, foreign_intent, rank_absolute, previous_rank_absolute, is_up, se_results_count, ranked_serp_element__serp_item__backlinks_info__referring_domains AS rd FROM labs_ranked_keywords`, expect: [
        { target: 'nike.com', keyword: 'trail running shoes', search_volume: 40500n, competition: 0.82, categories: [10021n, 13418n], keyword_difficulty: 47, foreign_intent: ['transactional'], rank_absolute: 4, previous_rank_absolute: 6, is_up: true, se_results_count: '123000000', rd: 120n },
      ] },
      { sql: `SELECT result_index, item_index, month_index, keyword, year, month, search_volume, (SELECT count(*)::INT FROM labs_ranked_keywords WHERE monthly_searches->>'$[1].month' = '9') AS json_kept FROM labs_ranked_keywords_monthly ORDER BY month_index`, expect: [
        { result_index: 0, item_index: 0, month_index: 0, keyword: 'trail running shoes', year: 2026, month: 10, search_volume: 49500n, json_kept: 1 },
        { result_index: 0, item_index: 0, month_index: 1, keyword: 'trail running shoes', year: 2026, month: 9, search_volume: 40500n, json_kept: 1 },
      ] },
    ],
  },
  {
    fixture: 'svc_labs.related_keywords.live.basic.json',
    path: '/v3/svc_labs/engA/related_keywords/live',
    kind: 'labs_related_keywords',
    rows: [
      { sql: `SELECT seed_keyword, keyword, depth, search_volume, related_keywords FROM labs_related_keywords ORDER BY item_index`, expect: [
        { seed_keyword: 'trail shoes', keyword: 'trail running shoes', depth: 1, search_volume: 40500n, related_keywords: ['trail running shoes women', 'trail shoes men'] },
        { seed_keyword: 'trail shoes', keyword: 'waterproof trail shoes', depth: 2, search_volume: 8100n, related_keywords: null },
      ] },
      // The second item has no monthly_searches: no month rows; a null volume stays a row with null.
      { sql: `SELECT item_index, month_index, keyword, year, month, search_volume FROM labs_related_keywords_monthly ORDER BY item_index, month_index`, expect: [
        { item_index: 0, month_index: 0, keyword: 'trail running shoes', year: 2026, month: 10, search_volume: 49500n },
        { item_index: 0, month_index: 1, keyword: 'trail running shoes', year: 2026, month: 9, search_volume: null },
      ] },
    ],
  },
  {
    fixture: 'backlinks.backlinks.live.basic.json',
    path: '/v3/backlinks/backlinks/live',
    kind: 'backlinks',
    rows: [
      { sql: `SELECT domain_from, dofollow, rank, attributes, ranked_keywords_info__page_from_keywords_count_top_10 AS top10 FROM backlinks ORDER BY item_index`, expect: [
        { domain_from: 'blog.example.org', dofollow: true, rank: 312, attributes: ['noopener'], top10: 4n },
        { domain_from: 'news.example.com', dofollow: false, rank: 90, attributes: null, top10: null },
      ] },
    ],
  },
  {
    fixture: 'backlinks.referring_domains.live.basic.json',
    path: '/v3/backlinks/referring_domains/live',
    kind: 'backlinks_referring_domains',
    rows: [{ sql: `SELECT target, domain, backlinks, referring_links_tld__org AS org FROM backlinks_referring_domains`, expect: [{ target: 'nike.com', domain: 'blog.example.org', backlinks: 14n, org: 14n }] }],
  },
  {
    fixture: 'on_page.pages.basic.json',
    path: '/v3/on_page/pages',
    kind: 'on_page_pages',
    rows: [
      { sql: `SELECT crawl_id, crawl_progress, pages_crawled FROM on_page_pages_calls`, expect: [{ crawl_id: '33333333-0000-4000-8000-000000000001', crawl_progress: 'finished', pages_crawled: 2n }] },
      { sql: `SELECT url, status_code, title, word_count, onpage_score, checks->>'is_https' AS https FROM on_page_pages ORDER BY item_index`, expect: [
        { url: 'https://example.com/', status_code: 200, title: 'Example', word_count: 540n, onpage_score: 93.5, https: 'true' },
        { url: 'https://example.com/old', status_code: 404, title: null, word_count: null, onpage_score: 12, https: null },
      ] },
    ],
  },
  {
    fixture: 'on_page.links.basic.json',
    path: '/v3/on_page/links',
    kind: 'on_page_links',
    rows: [{ sql: `SELECT link_to, direction, is_broken, page_to_status_code FROM on_page_links`, expect: [{ link_to: 'https://example.com/old', direction: 'internal', is_broken: true, page_to_status_code: 404 }] }],
  },
  {
    fixture: 'on_page.resources.basic.json',
    path: '/v3/on_page/resources',
    kind: 'on_page_resources',
    rows: [{ sql: `SELECT resource_type, width, cachable, ttl_ms, duration_time_ms, alternative_text_variations AS alts FROM on_page_resources`, expect: [{ resource_type: 'image', width: 200, cachable: true, ttl_ms: 86400000n, duration_time_ms: 35n, alts: ['Logo'] }] }],
  },
  {
    fixture: 'ai_optimization.keywords_search_volume.live.basic.json',
    path: '/v3/ai_optimization/ai_keyword_data/keywords_search_volume/live',
    kind: 'ai_keyword_volume',
    rows: [
      { sql: `SELECT keyword, location_code, ai_search_volume FROM ai_keyword_volume ORDER BY item_index`, expect: [{ keyword: 'trail shoes', location_code: 2840, ai_search_volume: 930n }, { keyword: 'best trail shoes', location_code: 2840, ai_search_volume: null }] },
      { sql: `SELECT keyword, month, ai_search_volume FROM ai_keyword_volume_monthly ORDER BY month_index`, expect: [{ keyword: 'trail shoes', month: 10, ai_search_volume: 1000n }, { keyword: 'trail shoes', month: 9, ai_search_volume: 860n }] },
    ],
  },
  {
    fixture: 'ai_optimization.llm_responses.live.basic.json',
    path: '/v3/ai_optimization/chat_llm/llm_responses/live',
    kind: 'llm_responses',
    rows: [
      { sql: `SELECT user_prompt, model_name, output_tokens, web_search, fan_out_queries FROM llm_responses`, expect: [{ user_prompt: 'best trail shoes?', model_name: 'chat-model-2026-10', output_tokens: 180n, web_search: true, fan_out_queries: ['best trail shoes 2026', 'trail shoes review'] }] },
      { sql: `SELECT type, sections->>'$[0].annotations[0].url' AS url FROM llm_response_items`, expect: [{ type: 'message', url: 'https://www.runnersworld.com/trail' }] },
    ],
  },
  {
    fixture: 'v1.embeddings.basic.json',
    path: '/v1/embeddings',
    kind: 'embeddings',
    rows: [
      { sql: `SELECT model, total_tokens FROM embedding_calls`, expect: [{ model: 'text-embedding-3-small', total_tokens: 9n }] },
      { sql: `SELECT input_index, model, embedding FROM embeddings ORDER BY data_index`, expect: [{ input_index: 0, model: 'text-embedding-3-small', embedding: [0.0123, -0.5, 0.25] }, { input_index: 1, model: 'text-embedding-3-small', embedding: [0.5, 0.5, -0.125] }] },
    ],
  },
  {
    fixture: 'backlinks.anchors.live.generic.json',
    path: '/v3/backlinks/anchors/live',
    kind: 'backlinks_anchors',
    rows: [
      { sql: `SELECT target, total_count FROM backlinks_anchors`, expect: [{ target: 'nike.com', total_count: 2n }] },
      { sql: `SELECT items_index, anchor, rank, referring_links_tld__com AS com, referring_links_tld__org AS org, attributes, first_seen FROM backlinks_anchors__items ORDER BY items_index`, expect: [
        { items_index: 0, anchor: 'trail shoes', rank: 40n, com: 10n, org: 2n, attributes: ['nofollow'], first_seen: '2025-01-05 11:00:00 +00:00' },
        { items_index: 1, anchor: 'nike', rank: 80n, com: 290n, org: null, attributes: [], first_seen: null },
      ] },
      { sql: `SELECT items_index, examples_index, url, rank FROM backlinks_anchors__items__examples`, expect: [{ items_index: 0, examples_index: 0, url: 'https://a.example/x', rank: 3n }] },
    ],
  },
];

describe('normalizer: a golden case per result kind (hand-written fixtures, real DuckDB)', () => {
  let wh: Warehouse;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, done } = await tempWarehouse()));
  afterEach(async () => done());

  for (const g of GOLDEN) {
    it(`${g.kind}: ${g.fixture}`, async () => {
      expect(kindOfPath(g.path)).toBe(g.kind);
      const ids = await land(wh, response(g.path, await compactFixture(g.fixture)));
      const report = await loadLanded(wh, { callIds: ids });
      expect(report.skippedFiles).toEqual([]);
      for (const r of g.rows) expect(await wh.all(r.sql)).toEqual(r.expect);
    });
  }

  it('creates every declared table with its declared column types', async () => {
    const cols = await wh.all<{ t: string; c: string; ty: string }>(
      `SELECT table_name AS t, column_name AS c, data_type AS ty FROM information_schema.columns WHERE table_schema = 'main'`,
    );
    const actual = new Map(cols.map((c) => [`${c.t}.${c.c}`, c.ty]));
    for (const t of DECLARED_TABLES) {
      for (const c of t.columns) {
        expect(actual.get(`${t.name}.${c.name}`)?.replace('TIMESTAMP WITH TIME ZONE', 'TIMESTAMPTZ'), `${t.name}.${c.name}`).toBe(sqlType(c.kind));
      }
    }
  });
});
