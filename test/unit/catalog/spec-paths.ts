/**
 * Every method and path the service interface names, copied by hand from its tables
 * (Endpoints, Engine A events, Trends, On-page, Utility, AI optimization, /v1, Sandbox and
 * the v2 → v3 mapping table), with `{engine}/{type}` and `{api}` expanded from the spec's
 * lists. Trailing slashes are kept as the spec writes them; `{id}` stands for a task id.
 */
export const ENGINE_TYPE_PAIRS = [
  'engA/organic', 'engA/maps', 'engA/news', 'engA/events', 'engA/images', 'engA/search_by_image', 'engA/jobs',
  'engA/local_finder', 'engA/dataset_search', 'engA/dataset_info', 'engA/autocomplete', 'engA/ai_mode',
  'engB/organic', 'engC/organic', 'engD/organic', 'engE/organic', 'engF/organic', 'engG/organic',
  'engG/video_info', 'engG/video_subtitles', 'engG/video_comments',
];

export const APIS = [
  'serp', 'ai_optimization', 'keywords_data', 'domain_analytics', 'svc_labs', 'backlinks', 'on_page',
  'content_analysis', 'merchant', 'app_data', 'business_data',
];

const fourSuffixes = (base: string): Array<[string, string]> => [
  ['POST', `${base}live/`],
  ['POST', `${base}task_post/`],
  ['GET', `${base}tasks_ready/`],
  ['GET', `${base}task_get/{id}`],
];

export const SPEC_PATHS: ReadonlyArray<readonly [string, string]> = [
  // /v1
  ['POST', '/v1/chat/completions'],
  ['POST', '/v1/embeddings'],
  // AI optimization
  ['GET', '/v3/ai_optimization/ai_keyword_data/available_filters'],
  ['POST', '/v3/ai_optimization/ai_keyword_data/keywords_search_volume/live'],
  ['GET', '/v3/ai_optimization/ai_keyword_data/locations_and_languages'],
  ['POST', '/v3/ai_optimization/chat_llm/llm_responses/live'],
  ['GET', '/v3/ai_optimization/chat_llm/llm_responses/models'],
  // Utility endpoints
  ['GET', '/v3/on_page/lighthouse/versions'],
  ['GET', '/v3/keywords_data/endpoints'],
  ['GET', '/v3/serp/endpoints'],
  ['GET', '/v3/appendix/status'],
  ['GET', '/v3/appendix/user_data'],
  ['POST', '/v3/appendix/webhook_resend'],
  ...APIS.map((api) => ['POST', `/v3/${api}/errors`] as const),
  ...APIS.map((api) => ['POST', `/v3/${api}/id_list`] as const),
  ['GET', '/v3/serp/engA/locations'],
  ['GET', '/v3/serp/engA/languages'],
  ['GET', '/v3/serp/engA/events/locations'],
  ...ENGINE_TYPE_PAIRS.map((p) => ['GET', `/v3/serp/${p}/tasks_fixed`] as const),
  // SERP functions of every pair (issue 3 and the mapping table: three task_get formats, live regular/advanced)
  ...ENGINE_TYPE_PAIRS.flatMap((p) => [
    ['POST', `/v3/serp/${p}/task_post`] as const,
    ['GET', `/v3/serp/${p}/tasks_ready`] as const,
    ['GET', `/v3/serp/${p}/task_get/regular/{id}`] as const,
    ['GET', `/v3/serp/${p}/task_get/advanced/{id}`] as const,
    ['GET', `/v3/serp/${p}/task_get/html/{id}`] as const,
    ['POST', `/v3/serp/${p}/live/regular`] as const,
    ['POST', `/v3/serp/${p}/live/advanced`] as const,
  ]),
  // On-page
  ['POST', '/v3/on_page/task_post'],
  ['POST', '/v3/on_page/resources'],
  ['POST', '/v3/on_page/pages'],
  ['POST', '/v3/on_page/links'],
  // Trends
  ['POST', '/v3/keywords_data/svc_trends/explore/live/'],
  ['POST', '/v3/keywords_data/svc_trends/subregion_interests/live/'],
  ['POST', '/v3/keywords_data/svc_trends/demography/live/'],
  ['POST', '/v3/keywords_data/svc_trends/merged_data/live/'],
  // Engine A events
  ['POST', '/v3/serp/engA/v2/live/advanced/'],
  ['POST', '/v3/serp/engA/v2/task_post/'],
  ['GET', '/v3/serp/engA/v2/task_get/advanced/{id}'],
  ['POST', '/v3/serp/engA/events/task_post'],
  // Sandbox table
  ['POST', '/v3/keywords_data/engA/search_volume/task_post'],
  ['GET', '/v3/keywords_data/engA/search_volume/task_get/{id}'],
  ['POST', '/v3/keywords_data/engA/search_volume/live'],
  ['POST', '/v3/domain_analytics/technologies/aggregation_technologies/live'],
  ['POST', '/v3/backlinks/referring_domains/live'],
  ['POST', '/v3/content_analysis/search/live'],
  ['POST', '/v3/app_data/engA/app_searches/task_post'],
  ['GET', '/v3/app_data/engA/app_searches/task_get/advanced/{id}'],
  ['POST', '/v3/business_data/engA/hotel_info/task_post'],
  ['GET', '/v3/business_data/engA/hotel_info/task_get/advanced/{id}'],
  // v2 → v3 mapping table
  ['POST', '/v3/serp/engA/organic/live/regular/'],
  ['POST', '/v3/serp/engA/organic/live/advanced/'],
  ['POST', '/v3/serp/engA/organic/task_post/'],
  ['GET', '/v3/serp/engA/organic/tasks_ready/'],
  ['GET', '/v3/serp/engA/organic/task_get/regular/{id}'],
  ['GET', '/v3/serp/engA/images/task_get/advanced/{id}'],
  ['GET', '/v3/serp/engA/locations/'],
  ...fourSuffixes('/v3/keywords_data/engA_ads/search_volume/'),
  ...fourSuffixes('/v3/keywords_data/engA_ads/keywords_for_site/'),
  ...fourSuffixes('/v3/keywords_data/engA_ads/keywords_for_keywords/'),
  ...fourSuffixes('/v3/keywords_data/engA_ads/ad_traffic_by_keywords/'),
  ...[
    'related_keywords', 'keyword_suggestions', 'ranked_keywords', 'keyword_ideas', 'serp_competitors', 'relevant_pages',
    'subdomains', 'competitors_domain', 'categories_for_domain', 'keywords_for_categories', 'domain_intersection',
  ].map((fn) => ['POST', `/v3/svc_labs/engA/${fn}/live/`] as const),
  ['GET', '/v3/svc_labs/locations_and_languages/'],
  ['POST', '/v3/reviews/engA/task_post/'],
  ['GET', '/v3/reviews/engA/tasks_ready/'],
  ['GET', '/v3/reviews/engA/task_get/{id}'],
  ['POST', '/v3/merchant/engA/products/task_post/'],
  ['GET', '/v3/merchant/engA/products/tasks_ready/'],
  ['GET', '/v3/merchant/engA/products/task_get/advanced/{id}'],
  ['GET', '/v3/merchant/engA/products/task_get/html/{id}'],
  ['POST', '/v3/merchant/engA/sellers/task_post/'],
  ['GET', '/v3/merchant/engA/sellers/tasks_ready/'],
  ['GET', '/v3/merchant/engA/sellers/task_get/advanced/{id}'],
  ['POST', '/v3/merchant/engA/sellers/ad_url/'],
  ['POST', '/v3/merchant/engA/product_spec/task_post/'],
  ['GET', '/v3/merchant/engA/product_spec/tasks_ready/'],
  ['GET', '/v3/merchant/engA/product_spec/task_get/advanced/{id}'],
  ['POST', '/v3/merchant/amazon/products/task_post/'],
  ['GET', '/v3/merchant/amazon/products/tasks_ready/'],
  ['GET', '/v3/merchant/amazon/products/task_get/advanced/{id}'],
  ['GET', '/v3/merchant/amazon/products/task_get/html/{id}'],
  ['POST', '/v3/merchant/amazon/asin/task_post/'],
  ['GET', '/v3/merchant/amazon/asin/tasks_ready/'],
  ['GET', '/v3/merchant/amazon/asin/task_get/advanced/{id}'],
];
