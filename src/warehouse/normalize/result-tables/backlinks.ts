import { c, indexKey, v3Table, type KindSpec } from './define.js';

const RESULT = 'tasks[].result[]';
const ITEM = 'tasks[].result[].items[]';

function targetTable(prefix: string) {
  return v3Table(`${prefix}_targets`, `one row per ${prefix.replace('_', ' ')} result (target)`, RESULT, [indexKey('result_index', RESULT)], [
    c('target', 'varchar'),
    c('mode', 'varchar'),
    c('total_count', 'bigint'),
    c('items_count', 'int'),
  ]);
}

/** Backlinks of a target: one row per backlink. */
export const backlinksKind: KindSpec = {
  kind: 'backlinks',
  match: /^\/v3\/backlinks\/backlinks\/live(\/|$)/,
  tables: [
    targetTable('backlinks'),
    v3Table('backlinks', 'one row per backlink of a target', ITEM, [indexKey('result_index', RESULT), indexKey('item_index', ITEM)], [
      c('target', 'varchar', '$.tasks[].result[].target'),
      c('type', 'varchar'),
      c('domain_from', 'varchar'),
      c('url_from', 'varchar'),
      c('domain_to', 'varchar'),
      c('url_to', 'varchar'),
      c('tld_from', 'varchar'),
      c('anchor', 'varchar'),
      c('item_type', 'varchar'),
      c('dofollow', 'bool'),
      c('is_new', 'bool'),
      c('is_lost', 'bool'),
      c('is_broken', 'bool'),
      c('rank', 'int'),
      c('page_from_rank', 'int'),
      c('domain_from_rank', 'int'),
      c('backlink_spam_score', 'int'),
      c('first_seen', 'varchar'),
      c('last_seen', 'varchar'),
      c('prev_seen', 'varchar'),
      c('attributes', 'varchar[]'),
    ]),
  ],
};

/** Referring domains of a target: one row per domain. */
export const referringDomainsKind: KindSpec = {
  kind: 'backlinks_referring_domains',
  reads: [{ resultKind: 'backlinks' }],
  match: /^\/v3\/backlinks\/referring_domains\/live(\/|$)/,
  tables: [
    targetTable('backlinks_referring_domains'),
    v3Table('backlinks_referring_domains', 'one row per domain linking to a target', ITEM, [indexKey('result_index', RESULT), indexKey('item_index', ITEM)], [
      c('target', 'varchar', '$.tasks[].result[].target'),
      c('type', 'varchar'),
      c('domain', 'varchar'),
      c('rank', 'int'),
      c('backlinks', 'bigint'),
      c('first_seen', 'varchar'),
      c('lost_date', 'varchar'),
      c('backlinks_spam_score', 'int'),
      c('broken_backlinks', 'bigint'),
      c('broken_pages', 'bigint'),
      c('referring_domains', 'bigint'),
      c('referring_main_domains', 'bigint'),
      c('referring_ips', 'bigint'),
      c('referring_subnets', 'bigint'),
      c('referring_pages', 'bigint'),
    ]),
  ],
};
