/** Engines whose organic SERP the tool plans (the foundation's slice). */
export const SERP_ORGANIC_ENGINES = ['engA', 'engB', 'engC', 'engD', 'engE', 'engF', 'engG'] as const;
export type SerpEngine = (typeof SERP_ORGANIC_ENGINES)[number];

/** The 21 `{engine}/{type}` pairs of the spec's Endpoints section, in its order. */
export const SERP_PAIRS = [
  ['engA', 'organic'],
  ['engA', 'maps'],
  ['engA', 'news'],
  ['engA', 'events'],
  ['engA', 'images'],
  ['engA', 'search_by_image'],
  ['engA', 'jobs'],
  ['engA', 'local_finder'],
  ['engA', 'dataset_search'],
  ['engA', 'dataset_info'],
  ['engA', 'autocomplete'],
  ['engA', 'ai_mode'],
  ['engB', 'organic'],
  ['engC', 'organic'],
  ['engD', 'organic'],
  ['engE', 'organic'],
  ['engF', 'organic'],
  ['engG', 'organic'],
  ['engG', 'video_info'],
  ['engG', 'video_subtitles'],
  ['engG', 'video_comments'],
] as const satisfies ReadonlyArray<readonly [string, string]>;

/** The `{api}` values of the `errors` and `id_list` utilities. */
export const UTILITY_APIS = [
  'serp',
  'ai_optimization',
  'keywords_data',
  'domain_analytics',
  'svc_labs',
  'backlinks',
  'on_page',
  'content_analysis',
  'merchant',
  'app_data',
  'business_data',
] as const;
