import { DOMAIN_POOL } from '../domain-pool.js';
import { createRng } from '../prng.js';
import { keywordsOf, languageOf, locationOf, serviceDate, targetOf, type ResultInput } from './result-input.js';

const lim = (input: ResultInput, def: number) => (typeof input.params.limit === 'number' ? input.params.limit : def);
const daysAgo = (input: ResultInput, d: number) => serviceDate(new Date(input.at.getTime() - d * 86_400_000));

/** Backlinks (referring domains): pool domains linking to the target, stable for the seed. */
export function backlinksResults(input: ResultInput): unknown[] {
  const target = targetOf(input.params);
  const items = DOMAIN_POOL.filter((s) => createRng(input.seed, 'bl', target, s.domain).chance(0.6)).map((s) => {
    const r = createRng(input.seed, 'bl-d', target, s.domain);
    return {
      type: 'backlinks_referring_domain',
      domain: s.domain,
      rank: Math.round(s.authority * 1000),
      backlinks: r.int(1, 5000),
      first_seen: daysAgo(input, r.int(30, 2000)),
      lost_date: null,
      backlinks_spam_score: r.int(0, 30),
      broken_backlinks: r.int(0, 5),
      referring_pages: r.int(1, 800),
      referring_main_domains: 1,
    };
  });
  return [
    { target, total_count: items.length, items_count: Math.min(items.length, lim(input, 100)), items: items.slice(0, lim(input, 100)) },
  ];
}

/** Domain analytics (technology aggregation): technology groups with domain counts. */
export function domainAnalyticsResults(input: ResultInput): unknown[] {
  const techs = [
    ['analytics', 'Analytics', 'Matomo'],
    ['cms', 'CMS', 'WordPress'],
    ['web_servers', 'Web servers', 'Nginx'],
    ['javascript_frameworks', 'JavaScript frameworks', 'React'],
    ['ecommerce', 'Ecommerce', 'WooCommerce'],
  ];
  const items = techs.map(([group, category, technology]) => ({
    type: 'aggregation_technologies_item',
    group,
    category,
    technology,
    domains_count: createRng(input.seed, 'tech', technology!).int(1000, 5_000_000),
  }));
  return [{ total_count: items.length, items_count: items.length, items }];
}

/** Content analysis (search): pages mentioning the keyword, with sentiment and rank. */
export function contentAnalysisResults(input: ResultInput): unknown[] {
  const kw = keywordsOf(input.params)[0] ?? 'keyword';
  const items = DOMAIN_POOL.slice(0, 30).map((s, i) => {
    const r = createRng(input.seed, 'ca', kw, s.domain);
    return {
      type: 'content_analysis_search',
      url: `https://${s.domain}/${kw.replace(/\s+/g, '-')}-${i}`,
      domain: s.domain,
      main_domain: s.domain,
      url_rank: r.int(0, 500),
      domain_rank: Math.round(s.authority * 1000),
      fetch_time: daysAgo(input, r.int(0, 90)),
      country: 'US',
      language: languageOf(input.params),
      score: Number((r.next() * 10).toFixed(3)),
      page_category: [10000 + r.int(0, 999)],
      content_info: {
        content_type: 'page_content',
        title: `${kw} — ${s.name}`,
        snippet: `… ${kw} …`,
        sentiment_connotations: { positive: Number(r.next().toFixed(3)), negative: Number((r.next() / 3).toFixed(3)) },
        connotation_types: null,
        text_category: null,
        date_published: daysAgo(input, r.int(1, 700)),
      },
    };
  });
  return [
    {
      type: 'content_analysis',
      total_count: items.length,
      items_count: Math.min(items.length, lim(input, 100)),
      items: items.slice(0, lim(input, 100)),
    },
  ];
}

/** A SERP-like listing of a marketplace, app store, hotel or review source. */
function listing(
  input: ResultInput,
  type: string,
  itemType: string,
  make: (i: number, r: ReturnType<typeof createRng>) => Record<string, unknown>,
): unknown[] {
  const kw =
    keywordsOf(input.params)[0] ??
    (typeof input.params.hotel_identifier === 'string' ? input.params.hotel_identifier : targetOf(input.params));
  const depth = typeof input.params.depth === 'number' ? Math.min(100, input.params.depth) : 20;
  const items = Array.from({ length: depth }, (_, i) => ({
    type: itemType,
    rank_group: i + 1,
    rank_absolute: i + 1,
    position: 'left',
    xpath: null,
    ...make(i, createRng(input.seed, type, kw, i)),
  }));
  return [
    {
      keyword: kw,
      type,
      se_domain: 'enga.com',
      location_code: locationOf(input.params),
      language_code: languageOf(input.params),
      check_url: null,
      datetime: serviceDate(input.at),
      item_types: [itemType],
      items_count: items.length,
      items,
    },
  ];
}

/** Merchant products, sellers, product spec, marketplace products and ASIN. */
export function merchantResults(input: ResultInput): unknown[] {
  return listing(input, 'shopping', 'shopping_serp', (i, r) => {
    const shop = DOMAIN_POOL.filter((s) => s.style === 'shop')[i % 10]!;
    return {
      domain: shop.domain,
      title: `Product ${i + 1}`,
      url: `https://${shop.domain}/p/${r.int(10000, 99999)}`,
      product_id: String(r.int(1e9, 9e9)),
      seller: shop.name,
      price: Number((5 + r.next() * 300).toFixed(2)),
      currency: 'USD',
      product_rating: { rating_type: 'Max5', value: Number((3 + 2 * r.next()).toFixed(1)), votes_count: r.int(0, 5000), rating_max: 5 },
      delivery_info: null,
    };
  });
}

/** App data (app searches). */
export function appDataResults(input: ResultInput): unknown[] {
  return listing(input, 'app_searches', 'engA_play_search_organic', (i, r) => ({
    app_id: `com.example.app${r.int(100, 999)}`,
    title: `App ${i + 1}`,
    url: null,
    icon: null,
    reviews_count: r.int(0, 200000),
    rating: { rating_type: 'Max5', value: Number((3 + 2 * r.next()).toFixed(1)), votes_count: r.int(0, 200000), rating_max: 5 },
    is_free: r.chance(0.8),
    price: null,
  }));
}

/** Business data (hotel info). */
export function businessDataResults(input: ResultInput): unknown[] {
  return listing(input, 'hotel_info', 'hotel_info', (i, r) => ({
    title: `Hotel ${i + 1}`,
    stars: r.int(2, 5),
    address: `${r.int(1, 300)} Main Street`,
    prices: { price: r.int(60, 600), currency: 'USD' },
    rating: { rating_type: 'Max5', value: Number((3 + 2 * r.next()).toFixed(1)), votes_count: r.int(0, 9000), rating_max: 5 },
  }));
}

/** Reviews of a business or product. */
export function reviewsResults(input: ResultInput): unknown[] {
  return listing(input, 'reviews', 'engA_review_search', (i, r) => ({
    review_text: `Review ${i + 1}: ${r.chance(0.7) ? 'great' : 'could be better'}.`,
    rating: { rating_type: 'Max5', value: r.int(1, 5), votes_count: null, rating_max: 5 },
    timestamp: daysAgo(input, r.int(1, 900)),
    profile_name: `user${r.int(100, 999)}`,
    owner_answer: null,
  }));
}

/** Lighthouse: a report summary for the url, with the version asked for or the default. */
export function lighthouseResults(input: ResultInput, defaultVersion: string): unknown[] {
  const url = typeof input.params.url === 'string' ? input.params.url : 'https://example.com/';
  const r = createRng(input.seed, 'lighthouse', url);
  const score = () => Number((0.5 + 0.5 * r.next()).toFixed(2));
  return [
    {
      lighthouseVersion: input.params.version ?? defaultVersion,
      requestedUrl: url,
      finalUrl: url,
      fetchTime: input.at.toISOString(),
      categories: {
        performance: { score: score() },
        accessibility: { score: score() },
        'best-practices': { score: score() },
        seo: { score: score() },
      },
    },
  ];
}
