import { c, indexKey, resultDate, v3Table, type KindSpec } from './define.js';

const RESULT = 'tasks[].result[]';
const ITEM = 'tasks[].result[].items[]';

/**
 * Trends (explore, subregion interests, demography, merged data): one row per result and
 * one per item (graph, map, demography, topics). An item's `data` is a list of points for
 * graphs and an object for demography, so it is kept whole as JSON.
 */
export const trendsKind: KindSpec = {
  kind: 'trends',
  reads: [{ resultKind: 'trends' }],
  match: /^\/v3\/keywords_data\/svc_trends\/[^/]+\/live(\/|$)/,
  tables: [
    v3Table('trends_results', 'one row per trends result', RESULT, [indexKey('result_index', RESULT)], [
      c('function', 'varchar', '$.tasks[].data.function'),
      c('keywords', 'varchar[]'),
      c('type', 'varchar'),
      c('location_code', 'int'),
      c('language_code', 'varchar'),
      { name: 'checked_at', kind: 'timestamptz', path: 'datetime', transform: 'service_time' },
      resultDate(),
      c('items_count', 'int'),
    ]),
    v3Table('trends_items', 'one row per trends item (graph, map, demography, topics list)', ITEM, [indexKey('result_index', RESULT), indexKey('item_index', ITEM)], [
      resultDate(),
      c('type', 'varchar'),
      c('position', 'int'),
      c('title', 'varchar'),
      c('keywords', 'varchar[]'),
      c('data', 'json', undefined, 'points {date_from, date_to, timestamp, missing_data, values[]} or regions or demography'),
      c('averages', 'bigint[]'),
    ]),
  ],
};
