import { c, indexKey, v3Table, type KindSpec } from './define.js';

const RESULT = 'tasks[].result[]';
const ITEM = 'tasks[].result[].items[]';
const KD = 'keyword_data';
const MONTH = `${ITEM}.${KD}.keyword_info.monthly_searches[]`;

/**
 * The months of an item's `keyword_info.monthly_searches`, one row each (dlt's child table
 * of a list of objects), keyed by the item and the month's place in the list. Location and
 * language are the parent item's (`keyword_data`), or its result's when the item has none.
 */
function monthlyTable(name: string, parent: string) {
  return v3Table(name, `one row per keyword and month of a ${parent} row (keyword_info.monthly_searches)`, MONTH, [indexKey('result_index', RESULT), indexKey('item_index', ITEM), indexKey('month_index', MONTH)], [
    c('keyword', 'varchar', `$.${ITEM}.${KD}.keyword`),
    c('year', 'int'),
    c('month', 'int'),
    c('search_volume', 'bigint'),
  ]);
}

/** Keyword data (KD of result-shapes.md), flattened with stable names. */
function keywordData(prefix: string, monthlyTable: string) {
  return [
    c('keyword', 'varchar', `${prefix}.keyword`),
    c('location_code', 'int', `${prefix}.location_code`),
    c('language_code', 'varchar', `${prefix}.language_code`),
    c('search_volume', 'bigint', `${prefix}.keyword_info.search_volume`),
    c('cpc', 'double', `${prefix}.keyword_info.cpc`),
    c('competition', 'double', `${prefix}.keyword_info.competition`),
    c('competition_level', 'varchar', `${prefix}.keyword_info.competition_level`),
    c('low_top_of_page_bid', 'double', `${prefix}.keyword_info.low_top_of_page_bid`),
    c('high_top_of_page_bid', 'double', `${prefix}.keyword_info.high_top_of_page_bid`),
    c('categories', 'bigint[]', `${prefix}.keyword_info.categories`),
    c('monthly_searches', 'json', `${prefix}.keyword_info.monthly_searches`, `the list as received; one row per month in ${monthlyTable}`),
    c('search_volume_trend_monthly', 'double', `${prefix}.keyword_info.search_volume_trend.monthly`),
    c('search_volume_trend_quarterly', 'double', `${prefix}.keyword_info.search_volume_trend.quarterly`),
    c('search_volume_trend_yearly', 'double', `${prefix}.keyword_info.search_volume_trend.yearly`),
    c('keyword_info_updated_at', 'varchar', `${prefix}.keyword_info.last_updated_time`),
    c('core_keyword', 'varchar', `${prefix}.keyword_properties.core_keyword`),
    c('keyword_difficulty', 'int', `${prefix}.keyword_properties.keyword_difficulty`),
    c('detected_language', 'varchar', `${prefix}.keyword_properties.detected_language`),
    c('is_another_language', 'bool', `${prefix}.keyword_properties.is_another_language`),
    c('main_intent', 'varchar', `${prefix}.search_intent_info.main_intent`),
    c('foreign_intent', 'varchar[]', `${prefix}.search_intent_info.foreign_intent`),
  ];
}

/** Labs ranked keywords: one row per target, one per keyword the target ranks for, and one per keyword and month. */
export const rankedKeywordsKind: KindSpec = {
  kind: 'labs_ranked_keywords',
  reads: [{ resultKind: 'labs_ranked_keywords' }],
  match: /^\/v3\/svc_labs\/[^/]+\/ranked_keywords\/live(\/|$)/,
  tables: [
    v3Table('labs_ranked_keywords_targets', 'one row per ranked-keywords result (target, location, language)', RESULT, [indexKey('result_index', RESULT)], [
      c('target', 'varchar'),
      c('se_type', 'varchar'),
      c('location_code', 'int'),
      c('language_code', 'varchar'),
      c('total_count', 'bigint'),
      c('items_count', 'int'),
      c('metrics_organic', 'json', 'metrics.organic', 'position buckets, counts and etv of organic results'),
      c('metrics_paid', 'json', 'metrics.paid'),
    ]),
    v3Table('labs_ranked_keywords', 'one row per keyword a target ranks for', ITEM, [indexKey('result_index', RESULT), indexKey('item_index', ITEM)], [
      c('target', 'varchar', '$.tasks[].result[].target'),
      c('se_type', 'varchar'),
      ...keywordData(KD, 'labs_ranked_keywords_monthly'),
      c('serp_item_type', 'varchar', 'ranked_serp_element.serp_item.type'),
      c('rank_group', 'int', 'ranked_serp_element.serp_item.rank_group'),
      c('rank_absolute', 'int', 'ranked_serp_element.serp_item.rank_absolute'),
      c('domain', 'varchar', 'ranked_serp_element.serp_item.domain'),
      c('main_domain', 'varchar', 'ranked_serp_element.serp_item.main_domain'),
      c('url', 'varchar', 'ranked_serp_element.serp_item.url'),
      c('relative_url', 'varchar', 'ranked_serp_element.serp_item.relative_url'),
      c('title', 'varchar', 'ranked_serp_element.serp_item.title'),
      c('etv', 'double', 'ranked_serp_element.serp_item.etv'),
      c('previous_rank_absolute', 'int', 'ranked_serp_element.serp_item.rank_changes.previous_rank_absolute'),
      c('is_new', 'bool', 'ranked_serp_element.serp_item.rank_changes.is_new'),
      c('is_up', 'bool', 'ranked_serp_element.serp_item.rank_changes.is_up'),
      c('is_down', 'bool', 'ranked_serp_element.serp_item.rank_changes.is_down'),
      c('serp_item_types', 'varchar[]', 'ranked_serp_element.serp_item_types'),
      c('se_results_count', 'varchar', 'ranked_serp_element.se_results_count', 'a string in this endpoint'),
      c('serp_keyword_difficulty', 'int', 'ranked_serp_element.keyword_difficulty'),
      c('is_lost', 'bool', 'ranked_serp_element.is_lost'),
      c('check_url', 'varchar', 'ranked_serp_element.check_url'),
      c('serp_updated_at', 'varchar', 'ranked_serp_element.last_updated_time'),
      c('serp_previous_updated_at', 'varchar', 'ranked_serp_element.previous_updated_time'),
    ]),
    monthlyTable('labs_ranked_keywords_monthly', 'labs_ranked_keywords'),
  ],
};

/** Labs related keywords: one row per seed, one per related keyword, and one per related keyword and month. */
export const relatedKeywordsKind: KindSpec = {
  kind: 'labs_related_keywords',
  reads: [{ resultKind: 'labs_related_keywords' }],
  match: /^\/v3\/svc_labs\/[^/]+\/related_keywords\/live(\/|$)/,
  tables: [
    v3Table('labs_related_keywords_seeds', 'one row per related-keywords result (seed keyword)', RESULT, [indexKey('result_index', RESULT)], [
      c('seed_keyword', 'varchar'),
      c('location_code', 'int'),
      c('language_code', 'varchar'),
      c('total_count', 'bigint'),
      c('items_count', 'int'),
      c('seed_keyword_data', 'json'),
    ]),
    v3Table('labs_related_keywords', 'one row per related keyword of a seed', ITEM, [indexKey('result_index', RESULT), indexKey('item_index', ITEM)], [
      c('seed_keyword', 'varchar', '$.tasks[].result[].seed_keyword'),
      c('depth', 'int'),
      c('related_keywords', 'varchar[]'),
      ...keywordData(KD, 'labs_related_keywords_monthly'),
    ]),
    monthlyTable('labs_related_keywords_monthly', 'labs_related_keywords'),
  ],
};
