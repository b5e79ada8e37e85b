import { DOMAIN_POOL, type PoolSite } from '../domain-pool.js';
import { keywordTopics } from '../keyword-topics.js';
import { createRng } from '../prng.js';
import { resolveSerpQuery } from '../serp-query.js';
import { rankSites } from '../serp-ranking.js';
import { keywordMetrics, relatedKeywords } from './keyword-metrics.js';
import { keywordsOf, languageOf, locationOf, serviceDate, targetOf, type ResultInput } from './result-input.js';

const TOPIC_SEEDS: Record<string, string[]> = {
  shopping: ['running shoes', 'wireless earbuds', 'office chair'],
  tech: ['laptop', 'iphone case', 'usb c hub'],
  health: ['sleep tips', 'vitamin d', 'back pain'],
  finance: ['mortgage rates', 'credit card', 'index funds'],
  food: ['pizza dough recipe', 'banana bread', 'coffee'],
  travel: ['cheap flights', 'paris hotels', 'beach vacation'],
  home: ['garden ideas', 'sofa', 'paint colors'],
  sports: ['marathon training', 'yoga', 'running'],
  news: ['election news', 'latest news'],
  dev: ['python tutorial', 'sql join', 'docker compose'],
};

/** KD of result-shapes.md: keyword_info, keyword_properties, search_intent_info. */
export function keywordData(input: ResultInput, keyword: string) {
  const m = keywordMetrics(input.seed, keyword, locationOf(input.params), input.at);
  const r = createRng(input.seed, 'labs-kd', keyword);
  const topics = keywordTopics(keyword);
  const intent = topics.has('shopping') ? 'commercial' : topics.has('travel') || topics.has('finance') ? 'transactional' : 'informational';
  const last = m.monthly_searches.slice(0, 3).reduce((s, x) => s + x.search_volume, 0) / 3;
  const trend = (a: number) => Math.round(((last - a) / Math.max(1, a)) * 100);
  return {
    se_type: 'engA',
    keyword,
    location_code: locationOf(input.params),
    language_code: languageOf(input.params),
    keyword_info: {
      se_type: 'engA',
      last_updated_time: serviceDate(input.at),
      competition: Number((m.competition_index / 100).toFixed(2)),
      competition_level: m.competition,
      cpc: m.cpc,
      search_volume: m.search_volume,
      low_top_of_page_bid: m.low_top_of_page_bid,
      high_top_of_page_bid: m.high_top_of_page_bid,
      categories: [10000 + r.int(0, 999)],
      monthly_searches: m.monthly_searches,
      search_volume_trend: {
        monthly: trend(m.monthly_searches[1]!.search_volume),
        quarterly: trend(m.monthly_searches[3]!.search_volume),
        yearly: trend(m.monthly_searches[11]!.search_volume),
      },
    },
    keyword_properties: {
      se_type: 'engA',
      core_keyword: null,
      keyword_difficulty: r.int(0, 100),
      detected_language: languageOf(input.params),
      is_another_language: false,
    },
    search_intent_info: {
      se_type: 'engA',
      main_intent: intent,
      foreign_intent: intent === 'informational' ? ['commercial'] : ['informational'],
      last_updated_time: serviceDate(input.at),
    },
  };
}

interface RankedItem {
  se_type: string;
  keyword_data: ReturnType<typeof keywordData>;
  ranked_serp_element: {
    serp_item: { rank_group: number; etv: number; rank_changes: { is_up: boolean; is_down: boolean } & Record<string, unknown> } & Record<
      string,
      unknown
    >;
  } & Record<string, unknown>;
}

/** `ranked_keywords`: the keywords the target ranks for (its position from the simulated SERPs), with metrics. */
export function rankedKeywordsResults(input: ResultInput): unknown[] {
  const target = targetOf(input.params).replace(/^www\./, '');
  const site = DOMAIN_POOL.find((s) => s.domain === target);
  const seeds = (site?.topics ?? ['shopping']).flatMap((t) => TOPIC_SEEDS[t] ?? TOPIC_SEEDS.shopping!);
  const candidates = [...new Set(seeds.flatMap((k) => [k, ...relatedKeywords(input.seed, k, 4)]))];
  const limit = typeof input.params.limit === 'number' ? input.params.limit : 100;
  const items: RankedItem[] = [];
  for (const keyword of candidates) {
    const q = resolveSerpQuery('engA', { keyword, location_code: locationOf(input.params), depth: 100 }, input.at);
    const idx = site
      ? rankSites(q, input.seed).findIndex((r) => r.site.domain === target)
      : createRng(input.seed, 'rk', target, keyword).int(-40, 99);
    if (idx < 0) continue;
    const rank = idx + 1;
    const prev = rank + createRng(input.seed, 'rk-prev', target, keyword, q.day).int(-3, 3);
    items.push(rankedItem(input, target, site, keyword, rank, prev));
  }
  items.sort((a, b) => a.ranked_serp_element.serp_item.rank_group - b.ranked_serp_element.serp_item.rank_group);
  const page = items.slice(0, limit);
  return [
    {
      se_type: 'engA',
      target,
      location_code: locationOf(input.params),
      language_code: languageOf(input.params),
      total_count: items.length,
      items_count: page.length,
      metrics: { organic: rankedMetrics(items), paid: rankedMetrics([]) },
      items: page,
    },
  ];
}

/** One `ranked_keywords` item: the target's organic result at `rank` for the keyword, `prev` its rank a month before. */
function rankedItem(
  input: ResultInput,
  target: string,
  site: PoolSite | undefined,
  keyword: string,
  rank: number,
  prev: number,
): RankedItem {
  const kd = keywordData(input, keyword);
  return {
    se_type: 'engA',
    keyword_data: kd,
    ranked_serp_element: {
      se_type: 'engA',
      serp_item: {
        se_type: 'engA',
        type: 'organic',
        rank_group: rank,
        rank_absolute: rank + Math.floor(rank / 4),
        position: 'left',
        xpath: null,
        domain: site?.www ? `www.${target}` : target,
        main_domain: target,
        relative_url: `/${keyword.replace(/\s+/g, '-')}`,
        url: `https://${target}/${keyword.replace(/\s+/g, '-')}`,
        title: `${keyword} | ${site?.name ?? target}`,
        description: `All about ${keyword}.`,
        etv: Number((kd.keyword_info.search_volume * Math.max(0.01, 0.3 / rank)).toFixed(1)),
        rank_changes: { previous_rank_absolute: Math.max(1, prev), is_new: false, is_up: prev > rank, is_down: prev < rank },
        backlinks_info: null,
        rank_info: { page_rank: 0, main_domain_rank: Math.round((site?.authority ?? 0.3) * 1000) },
      },
      check_url: `https://www.enga.com/search?q=${encodeURIComponent(keyword)}`,
      serp_item_types: ['organic', 'people_also_ask'],
      se_results_count: String(1000 * kd.keyword_info.search_volume),
      keyword_difficulty: kd.keyword_properties.keyword_difficulty,
      is_lost: false,
      last_updated_time: serviceDate(input.at),
      previous_updated_time: serviceDate(new Date(input.at.getTime() - 30 * 86_400_000)),
    },
  };
}

/** The `metrics` of a list of ranked items: counts by rank band, movers and traffic. */
function rankedMetrics(list: readonly RankedItem[]) {
  const m: Record<string, number> = {};
  for (const lo of [1, 2, 4, 11, 21, 31, 41, 51, 61, 71, 81, 91]) {
    const hi = lo === 1 ? 1 : lo === 2 ? 3 : lo === 4 ? 10 : lo + 9;
    m[lo === hi ? 'pos_1' : `pos_${lo}_${hi}`] = list.filter(
      (i) => i.ranked_serp_element.serp_item.rank_group >= lo && i.ranked_serp_element.serp_item.rank_group <= hi,
    ).length;
  }
  const etv = list.reduce((s, i) => s + i.ranked_serp_element.serp_item.etv, 0);
  return {
    ...m,
    count: list.length,
    is_new: 0,
    is_up: list.filter((i) => i.ranked_serp_element.serp_item.rank_changes.is_up).length,
    is_down: list.filter((i) => i.ranked_serp_element.serp_item.rank_changes.is_down).length,
    is_lost: 0,
    etv: Number(etv.toFixed(1)),
    impressions_etv: Number((etv * 3).toFixed(1)),
    estimated_paid_traffic_cost: Number((etv * 1.1).toFixed(2)),
  };
}

/** `related_keywords`: the seed's data and related keywords at depth 1 and 2. */
export function relatedKeywordsResults(input: ResultInput): unknown[] {
  const seed = keywordsOf(input.params)[0] ?? 'keyword';
  const depth = typeof input.params.depth === 'number' ? Math.min(4, input.params.depth) : 1;
  const items: unknown[] = [];
  let level = [seed];
  for (let d = 1; d <= depth; d++) {
    const next: string[] = [];
    for (const k of level) {
      for (const rel of relatedKeywords(input.seed, k, d === 1 ? 8 : 3)) {
        next.push(rel);
        items.push({
          se_type: 'engA',
          keyword_data: keywordData(input, rel),
          depth: d,
          related_keywords: relatedKeywords(input.seed, rel, 4),
        });
      }
    }
    level = next;
  }
  const limit = typeof input.params.limit === 'number' ? input.params.limit : 100;
  const page = items.slice(0, limit);
  return [
    {
      se_type: 'engA',
      seed_keyword: seed,
      seed_keyword_data: keywordData(input, seed).keyword_info,
      location_code: locationOf(input.params),
      language_code: languageOf(input.params),
      total_count: items.length,
      items_count: page.length,
      items: page,
    },
  ];
}

/** The other labs functions: a plausible list of keyword (or domain) items of the shape labs uses. */
export function labsGenericResults(input: ResultInput): unknown[] {
  const fn = input.endpoint.path.split('/')[4] ?? 'labs';
  const domainFns = new Set([
    'serp_competitors',
    'competitors_domain',
    'subdomains',
    'relevant_pages',
    'domain_intersection',
    'categories_for_domain',
  ]);
  const seedKw = keywordsOf(input.params)[0] ?? targetOf(input.params).split('.')[0] ?? 'keyword';
  const limit = typeof input.params.limit === 'number' ? input.params.limit : 10;
  const items = domainFns.has(fn)
    ? DOMAIN_POOL.slice(0, 40)
        .map((s) => ({
          se_type: 'engA',
          domain: s.domain,
          avg_position: createRng(input.seed, fn, s.domain, seedKw).int(1, 60),
          intersections: createRng(input.seed, fn, 'x', s.domain).int(1, 500),
          etv: Math.round(s.authority * 10000),
        }))
        .sort((a, b) => a.avg_position - b.avg_position)
    : [seedKw, ...relatedKeywords(input.seed, seedKw, 14)].map((k) => ({ se_type: 'engA', keyword_data: keywordData(input, k) }));
  const page = items.slice(0, limit);
  return [
    {
      se_type: 'engA',
      ...(domainFns.has(fn) ? { target: targetOf(input.params) } : { seed: seedKw }),
      location_code: locationOf(input.params),
      language_code: languageOf(input.params),
      total_count: items.length,
      items_count: page.length,
      items: page,
    },
  ];
}
