import { EtlError } from '../errors.js';
import type { Endpoint } from './endpoint.js';
import { ENDPOINTS } from './endpoints.js';

const SERP = '/v3/serp/engA/organic';
const four = (base: string) => ['live', 'task_post', 'tasks_ready', 'task_get/{id}'].map((s) => `${base}/${s}`);
const flow = (base: string, gets: string[]) => [
  `${base}/task_post`,
  `${base}/tasks_ready`,
  ...gets.map((g) => `${base}/task_get/${g}{id}`),
];

/** The spec's v2 → v3 mapping table (Versioning, point 6), by v2 function name. */
export const V2_FUNCTIONS: Readonly<Record<string, readonly string[]>> = {
  'Live SERP': [`${SERP}/live/regular`],
  'Live extended SERP': [`${SERP}/live/advanced`],
  'SERP task creation': [`${SERP}/task_post`],
  'SERP ready list': [`${SERP}/tasks_ready`],
  'SERP result': ['regular', 'advanced', 'html'].map((f) => `${SERP}/task_get/${f}/{id}`),
  Images: flow('/v3/serp/engA/images', ['advanced/']),
  'SERP locations': ['/v3/serp/engA/locations'],
  'Search volume': four('/v3/keywords_data/engA_ads/search_volume'),
  'Keywords for site': four('/v3/keywords_data/engA_ads/keywords_for_site'),
  'Keywords for keywords': four('/v3/keywords_data/engA_ads/keywords_for_keywords'),
  'Ad traffic by keywords': four('/v3/keywords_data/engA_ads/ad_traffic_by_keywords'),
  'Related keywords': ['/v3/svc_labs/engA/related_keywords/live'],
  'Keyword suggestions': ['/v3/svc_labs/engA/keyword_suggestions/live'],
  'Ranked keywords': ['/v3/svc_labs/engA/ranked_keywords/live'],
  'Keyword ideas': ['/v3/svc_labs/engA/keyword_ideas/live'],
  'SERP competitors': ['/v3/svc_labs/engA/serp_competitors/live'],
  'Relevant pages': ['/v3/svc_labs/engA/relevant_pages/live'],
  Subdomains: ['/v3/svc_labs/engA/subdomains/live'],
  'Competitor domains': ['/v3/svc_labs/engA/competitors_domain/live'],
  'Categories for domain': ['/v3/svc_labs/engA/categories_for_domain/live'],
  'Keywords for categories': ['/v3/svc_labs/engA/keywords_for_categories/live'],
  'Domain intersection': ['/v3/svc_labs/engA/domain_intersection/live'],
  'Labs locations and languages': ['/v3/svc_labs/locations_and_languages'],
  Reviews: flow('/v3/reviews/engA', ['']),
  'Merchant products': flow('/v3/merchant/engA/products', ['advanced/', 'html/']),
  'Merchant sellers': [...flow('/v3/merchant/engA/sellers', ['advanced/']), '/v3/merchant/engA/sellers/ad_url'],
  'Merchant product spec': flow('/v3/merchant/engA/product_spec', ['advanced/']),
  // The spec's row is one: "Marketplace products and ASIN" (products also task_get/html/).
  'Marketplace products and ASIN': [
    ...flow('/v3/merchant/amazon/products', ['advanced/', 'html/']),
    ...flow('/v3/merchant/amazon/asin', ['advanced/']),
  ],
  // Each half on its own, kept for callers that named them apart.
  'Marketplace products': flow('/v3/merchant/amazon/products', ['advanced/', 'html/']),
  'Marketplace ASIN': flow('/v3/merchant/amazon/asin', ['advanced/']),
};

/** v2 functions removed in v3, with the replacement the spec names (point 7). */
export const V2_REMOVED: Readonly<Record<string, string>> = {
  'Search engine list': 'none needed: v3 picks the engine domain from location and language',
  'v2 search volume': 'the v3 search-volume endpoints (/v3/keywords_data/engA_ads/search_volume/...)',
  'Keyword suggestion tasks':
    'the labs suggestion or idea endpoints (/v3/svc_labs/engA/keyword_suggestions/live, /v3/svc_labs/engA/keyword_ideas/live)',
  'Ad traffic by platform': 'no replacement',
  'Keywords by category': '/v3/svc_labs/engA/keywords_for_categories/live',
};

const norm = (s: string) =>
  s
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ')
    .trim();

export interface Migration {
  /** v3 path templates, in the mapping table's order. */
  paths: string[];
  endpoints: Endpoint[];
  /** A deprecation note for the caller to show. */
  warning: string;
}

/**
 * Translates a v2 function name of the spec's mapping table (any case; spaces, `_` or `-`),
 * or a `/v2/...` path whose v3 twin is in the catalog, to v3 with a warning. A removed
 * function fails with the replacement the spec names; anything else fails plainly.
 */
export function migrateV2(nameOrPath: string): Migration {
  const input = nameOrPath.trim();
  if (input.startsWith('/v2/')) {
    const path = `/v3/${input.slice(4)}`.replace(/\/+$/, '');
    const eps = ENDPOINTS.filter((e) => e.path === path || e.path === `${path}/{id}`);
    if (eps.length)
      return { paths: [path], endpoints: eps, warning: `v2 path ${input} is gone (v2 support ends 2026-05-05); use ${path}.` };
  }
  const key = norm(input);
  const removed = Object.entries(V2_REMOVED).find(([name]) => norm(name) === key);
  if (removed) {
    throw new EtlError('ETL_REQUEST_INVALID', `the v2 function "${removed[0]}" was removed in v3; use ${removed[1]}.`, {
      context: { stage: 'catalog' },
    });
  }
  const found = Object.entries(V2_FUNCTIONS).find(([name]) => norm(name) === key);
  if (!found) {
    throw new EtlError(
      'ETL_REQUEST_INVALID',
      `"${input}" is neither a v2 function of the migration table nor a /v2 path with a v3 twin; see \`pipeline endpoints\` for the v3 paths.`,
      { context: { stage: 'catalog' } },
    );
  }
  const paths = [...found[1]];
  const endpoints = paths.map((p) => {
    const e = ENDPOINTS.find((x) => x.path === p);
    if (!e) throw new Error(`migration table names ${p}, which the catalog lacks`);
    return e;
  });
  return {
    paths,
    endpoints,
    warning: `"${found[0]}" is a v2 function (v2 support ends 2026-05-05); its v3 path${paths.length > 1 ? 's are' : ' is'} ${paths.join(', ')}.`,
  };
}
