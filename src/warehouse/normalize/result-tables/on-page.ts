import type { ColumnSpec } from '../../columns.js';
import { c, indexKey, v3Table, type KindSpec } from './define.js';

const RESULT = 'tasks[].result[]';
const ITEM = 'tasks[].result[].items[]';

function crawlTable(name: string) {
  return v3Table(name, 'one row per on-page call result (crawl progress at the time of the call)', RESULT, [indexKey('result_index', RESULT)], [
    c('crawl_id', 'varchar', '$.tasks[].data.id', 'the crawl task whose data this call read'),
    c('crawl_progress', 'varchar', undefined, 'in_progress or finished'),
    c('max_crawl_pages', 'bigint', 'crawl_status.max_crawl_pages'),
    c('pages_in_queue', 'bigint', 'crawl_status.pages_in_queue'),
    c('pages_crawled', 'bigint', 'crawl_status.pages_crawled'),
    c('total_items_count', 'bigint'),
    c('items_count', 'int'),
  ]);
}

function kind(fn: 'pages' | 'links' | 'resources', grain: string, columns: ColumnSpec[]): KindSpec {
  return {
    kind: `on_page_${fn}`,
    reads: [{ resultKind: `on_page_${fn}` }],
    match: new RegExp(`^/v3/on_page/${fn}(/|$)`),
    tables: [
      crawlTable(`on_page_${fn}_calls`),
      v3Table(`on_page_${fn}`, grain, ITEM, [indexKey('result_index', RESULT), indexKey('item_index', ITEM)], [
        c('crawl_id', 'varchar', '$.tasks[].data.id'),
        ...columns,
      ]),
    ],
  };
}

/** Crawled pages: one row per page. */
export const onPagePagesKind = kind('pages', 'one row per crawled page', [
  c('url', 'varchar'),
  c('resource_type', 'varchar'),
  c('status_code', 'int'),
  c('location', 'varchar'),
  c('title', 'varchar', 'meta.title'),
  c('description', 'varchar', 'meta.description'),
  c('canonical', 'varchar', 'meta.canonical'),
  c('internal_links_count', 'bigint', 'meta.internal_links_count'),
  c('external_links_count', 'bigint', 'meta.external_links_count'),
  c('images_count', 'bigint', 'meta.images_count'),
  c('word_count', 'bigint', 'meta.content.plain_text_word_count'),
  c('htags', 'json', 'meta.htags'),
  c('onpage_score', 'double'),
  c('total_dom_size', 'bigint'),
  c('click_depth', 'int'),
  c('size', 'bigint'),
  c('encoded_size', 'bigint'),
  c('total_transfer_size', 'bigint'),
  c('fetch_time', 'varchar'),
  c('duration_time_ms', 'bigint', 'page_timing.duration_time'),
  c('time_to_interactive_ms', 'bigint', 'page_timing.time_to_interactive'),
  c('broken_resources', 'bool'),
  c('broken_links', 'bool'),
  c('duplicate_title', 'bool'),
  c('duplicate_description', 'bool'),
  c('duplicate_content', 'bool'),
  c('checks', 'json', undefined, 'boolean page checks'),
  c('media_type', 'varchar'),
  c('server', 'varchar'),
]);

/** Links found by a crawl: one row per link. */
export const onPageLinksKind = kind('links', 'one row per link found by a crawl', [
  c('type', 'varchar'),
  c('domain_from', 'varchar'),
  c('domain_to', 'varchar'),
  c('page_from', 'varchar'),
  c('page_to', 'varchar'),
  c('link_from', 'varchar'),
  c('link_to', 'varchar'),
  c('link_attribute', 'varchar[]'),
  c('dofollow', 'bool'),
  c('direction', 'varchar', undefined, 'internal or external'),
  c('is_broken', 'bool'),
  c('text', 'varchar'),
  c('page_to_status_code', 'int'),
]);

/** Resources found by a crawl (spec: on-page resource list): one row per resource. */
export const onPageResourcesKind = kind('resources', 'one row per resource found by a crawl', [
  c('resource_type', 'varchar', undefined, 'script, image, stylesheet, broken'),
  c('url', 'varchar'),
  c('status_code', 'int'),
  c('location', 'varchar'),
  c('content_encoding', 'varchar'),
  c('media_type', 'varchar'),
  c('accept_type', 'varchar'),
  c('server', 'varchar'),
  c('from_sitemap', 'bool'),
  c('alternative_text', 'varchar'),
  c('title', 'varchar'),
  c('original_width', 'int'),
  c('original_height', 'int'),
  c('width', 'int'),
  c('height', 'int'),
  c('size', 'bigint'),
  c('encoded_size', 'bigint'),
  c('total_transfer_size', 'bigint'),
  c('fetch_time', 'varchar'),
  c('duration_time_ms', 'bigint', 'fetch_timing.duration_time'),
  c('cachable', 'bool', 'cache_control.cachable'),
  c('ttl_ms', 'bigint', 'cache_control.ttl'),
  c('meta', 'json'),
  c('checks', 'json'),
  c('resource_errors', 'json'),
  c('last_modified', 'json'),
]);
