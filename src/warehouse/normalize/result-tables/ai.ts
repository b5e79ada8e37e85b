import { c, indexKey, v3Table, type KindSpec } from './define.js';

const RESULT = 'tasks[].result[]';
const ITEM = 'tasks[].result[].items[]';
const MONTH = 'tasks[].result[].items[].ai_monthly_searches[]';

/** Search volume in AI tools: one row per keyword and one per keyword and month. */
export const aiKeywordVolumeKind: KindSpec = {
  kind: 'ai_keyword_volume',
  reads: [{ resultKind: 'ai_keyword_volume' }],
  match: /^\/v3\/ai_optimization\/ai_keyword_data\/keywords_search_volume\/live(\/|$)/,
  tables: [
    v3Table('ai_keyword_volume_results', 'one row per AI search-volume result', RESULT, [indexKey('result_index', RESULT)], [
      c('location_code', 'int'),
      c('language_code', 'varchar'),
      c('items_count', 'int'),
    ]),
    v3Table('ai_keyword_volume', 'one row per keyword', ITEM, [indexKey('result_index', RESULT), indexKey('item_index', ITEM)], [
      c('keyword', 'varchar'),
      c('location_code', 'int', '$.tasks[].result[].location_code'),
      c('language_code', 'varchar', '$.tasks[].result[].language_code'),
      c('ai_search_volume', 'bigint'),
    ]),
    v3Table('ai_keyword_volume_monthly', 'one row per keyword and month', MONTH, [indexKey('result_index', RESULT), indexKey('item_index', ITEM), indexKey('month_index', MONTH)], [
      c('keyword', 'varchar', '$.tasks[].result[].items[].keyword'),
      c('year', 'int'),
      c('month', 'int'),
      c('ai_search_volume', 'bigint'),
    ]),
  ],
};

/** LLM responses: one row per response and one per item (message) of it. */
export const llmResponsesKind: KindSpec = {
  kind: 'llm_responses',
  reads: [{ resultKind: 'llm_response' }],
  match: /^\/v3\/ai_optimization\/chat_llm\/llm_responses\/live(\/|$)/,
  tables: [
    v3Table('llm_responses', 'one row per LLM response', RESULT, [indexKey('result_index', RESULT)], [
      c('user_prompt', 'varchar', '$.tasks[].data.user_prompt'),
      c('model_name', 'varchar'),
      c('input_tokens', 'bigint'),
      c('output_tokens', 'bigint'),
      c('web_search', 'bool'),
      c('money_spent', 'double', undefined, 'raw USD, for reference; the charge is in the ledger'),
      { name: 'responded_at', kind: 'timestamptz', path: 'datetime', transform: 'service_time' },
      c('fan_out_queries', 'varchar[]'),
    ]),
    v3Table('llm_response_items', 'one row per item (message) of an LLM response', ITEM, [indexKey('result_index', RESULT), indexKey('item_index', ITEM)], [
      c('type', 'varchar'),
      c('sections', 'json', undefined, '{type, text, annotations: {title, url}[]}[]'),
    ]),
  ],
};
