import { define, taskFunction } from './define.js';
import type { Endpoint, ResultKind } from './endpoint.js';
import {
  keywordsForKeywordsTaskSchema,
  keywordsForSiteTaskSchema,
  searchVolumeTaskSchema,
  trendsTaskSchema,
} from './schemas/keyword-tasks.js';

const ADS_FUNCTIONS: ReadonlyArray<[string, Endpoint['request'], ResultKind]> = [
  ['search_volume', searchVolumeTaskSchema, 'search_volume'],
  ['keywords_for_site', keywordsForSiteTaskSchema, 'keywords_for_site'],
  ['keywords_for_keywords', keywordsForKeywordsTaskSchema, 'keywords_for_keywords'],
  ['ad_traffic_by_keywords', keywordsForKeywordsTaskSchema, 'ad_traffic'],
];

const TRENDS = ['explore', 'subregion_interests', 'demography', 'merged_data'] as const;

/**
 * Keywords data: the four `engA_ads` functions with `live`, `task_post`, `tasks_ready` and
 * `task_get/{id}` (the migration table), the `engA` search volume the sandbox table shows,
 * the four trends functions (live only) and the endpoint list.
 */
export const KEYWORDS_ENDPOINTS: readonly Endpoint[] = [
  ...ADS_FUNCTIONS.flatMap(([fn, request, resultKind]) =>
    taskFunction(`/v3/keywords_data/engA_ads/${fn}`, {
      formats: [],
      live: 'plain',
      request,
      resultKind,
      ...(fn === 'search_volume' ? { maxKeywordsPerTask: 700 } : {}),
    }),
  ),
  ...taskFunction('/v3/keywords_data/engA/search_volume', {
    formats: [],
    live: 'plain',
    request: searchVolumeTaskSchema,
    resultKind: 'search_volume',
    maxKeywordsPerTask: 700,
    inferred: 'the sandbox table shows task_post, task_get/{id} and live; tasks_ready assumed as for engA_ads',
  }),
  ...TRENDS.map((fn) =>
    define({
      path: `/v3/keywords_data/svc_trends/${fn}/live`,
      mode: 'live',
      request: trendsTaskSchema,
      resultKind: 'trends',
      maxKeywordsPerTask: 5,
    }),
  ),
  define({ path: '/v3/keywords_data/endpoints', mode: 'utility', method: 'GET', resultKind: 'endpoint_list' }),
];
