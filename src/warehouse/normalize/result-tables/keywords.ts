import { c, indexKey, v3Table, type KindSpec } from './define.js';

const RESULT = 'tasks[].result[]';
const MONTH = 'tasks[].result[].monthly_searches[]';

const keywordColumns = [
  c('keyword', 'varchar'),
  c('location_code', 'int'),
  c('language_code', 'varchar'),
  c('search_partners', 'bool'),
  c('competition', 'varchar', undefined, 'LOW, MEDIUM, HIGH'),
  c('competition_index', 'int'),
  c('search_volume', 'bigint'),
  c('low_top_of_page_bid', 'double'),
  c('high_top_of_page_bid', 'double'),
  c('cpc', 'double'),
  c('spell', 'varchar'),
  c('tag', 'varchar', '$.tasks[].data.tag'),
];
const monthColumns = [c('keyword', 'varchar', '$.tasks[].result[].keyword'), c('year', 'int'), c('month', 'int'), c('search_volume', 'bigint')];

/** Ads search volume: one row per keyword, and one per keyword and month. */
export const searchVolumeKind: KindSpec = {
  kind: 'search_volume',
  reads: [{ resultKind: 'search_volume' }],
  match: /^\/v3\/keywords_data\/[^/]+\/search_volume\/(task_get|live)(\/|$)/,
  tables: [
    v3Table('search_volume', 'one row per keyword of a search-volume task', RESULT, [indexKey('result_index', RESULT)], keywordColumns),
    v3Table('search_volume_monthly', 'one row per keyword and month', MONTH, [indexKey('result_index', RESULT), indexKey('month_index', MONTH)], monthColumns),
  ],
};

/** Keywords for a site or for seed keywords: the same row shape as search volume. */
export const adsKeywordsKind: KindSpec = {
  kind: 'ads_keywords',
  reads: [{ resultKind: 'keywords_for_site' }, { resultKind: 'keywords_for_keywords' }],
  match: /^\/v3\/keywords_data\/[^/]+\/keywords_for_(site|keywords)\/(task_get|live)(\/|$)/,
  tables: [
    v3Table('ads_keywords', 'one row per keyword idea of a keywords-for-site or keywords-for-keywords task', RESULT, [indexKey('result_index', RESULT)], [
      c('function', 'varchar', '$.tasks[].data.function'),
      c('target', 'varchar', '$.tasks[].data.target'),
      ...keywordColumns,
      c('keyword_annotations', 'json'),
    ]),
    v3Table('ads_keywords_monthly', 'one row per keyword idea and month', MONTH, [indexKey('result_index', RESULT), indexKey('month_index', MONTH)], monthColumns),
  ],
};
