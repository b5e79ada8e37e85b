import { define, taskFunction } from './define.js';
import type { Endpoint, ResultKind } from './endpoint.js';
import { looseTaskSchema } from './schemas/common.js';

const LABS: ReadonlyArray<[string, ResultKind]> = [
  ['related_keywords', 'labs_related_keywords'],
  ['keyword_suggestions', 'labs'],
  ['ranked_keywords', 'labs_ranked_keywords'],
  ['keyword_ideas', 'labs'],
  ['serp_competitors', 'labs'],
  ['relevant_pages', 'labs'],
  ['subdomains', 'labs'],
  ['competitors_domain', 'labs'],
  ['categories_for_domain', 'labs'],
  ['keywords_for_categories', 'labs'],
  ['domain_intersection', 'labs'],
];

const NOT_SHOWN = 'request fields not shown by the spec; tag rule applied, other fields pass through';

function live(path: string, resultKind: ResultKind): Endpoint {
  return define({ path, mode: 'live', request: looseTaskSchema, resultKind, inferred: NOT_SHOWN });
}

function tasks(base: string, formats: Array<'advanced' | 'html'>, resultKind: ResultKind): Endpoint[] {
  return taskFunction(base, { formats, request: looseTaskSchema, resultKind, inferred: NOT_SHOWN });
}

/**
 * The data families whose request fields the spec does not show: labs, domain analytics,
 * backlinks, content analysis, merchant, app data, business data and reviews. Paths and
 * formats are the migration and sandbox tables'.
 */
export const DATA_ENDPOINTS: readonly Endpoint[] = [
  ...LABS.map(([fn, kind]) => live(`/v3/svc_labs/engA/${fn}/live`, kind)),
  define({ path: '/v3/svc_labs/locations_and_languages', mode: 'utility', method: 'GET', resultKind: 'locations' }),
  live('/v3/domain_analytics/technologies/aggregation_technologies/live', 'domain_analytics'),
  live('/v3/backlinks/referring_domains/live', 'backlinks'),
  live('/v3/content_analysis/search/live', 'content_analysis'),
  ...tasks('/v3/merchant/engA/products', ['advanced', 'html'], 'merchant'),
  ...tasks('/v3/merchant/engA/sellers', ['advanced'], 'merchant'),
  define({
    path: '/v3/merchant/engA/sellers/ad_url',
    mode: 'live',
    request: looseTaskSchema,
    resultKind: 'merchant',
    inferred: 'method not marked, so POST as the migration table says; taken as charged',
  }),
  ...tasks('/v3/merchant/engA/product_spec', ['advanced'], 'merchant'),
  ...tasks('/v3/merchant/amazon/products', ['advanced', 'html'], 'merchant'),
  ...tasks('/v3/merchant/amazon/asin', ['advanced'], 'merchant'),
  ...tasks('/v3/app_data/engA/app_searches', ['advanced'], 'app_data'),
  ...tasks('/v3/business_data/engA/hotel_info', ['advanced'], 'business_data'),
  ...tasks('/v3/reviews/engA', [], 'reviews'),
];
