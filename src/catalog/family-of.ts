import type { FamilyId } from './families.js';

/**
 * The rate-limit family of a path, by the spec's Limits table. Specific rows win over the
 * general ones; a `/v3` path otherwise counts against its api's family (so `serp/errors`
 * and `serp/engA/locations` count as SERP calls). Where the table is open to reading,
 * the stricter family is taken: a slower run costs time, a 429 costs a retry.
 * - `svc_labs` and `ai_optimization/ai_keyword_data` are keyword endpoints (60/min);
 * - image generation goes to `/v1/chat/completions`, so it counts as chat (60/min).
 */
export function familyOf(path: string): FamilyId {
  if (path.startsWith('/v1/')) return path.startsWith('/v1/chat/') ? 'chat' : 'v1_other';
  if (path === '/v3/appendix/status') return 'appendix_status';
  if (/^\/v3\/[^/]+\/id_list$/.test(path)) return 'id_list';
  if (path.endsWith('/tasks_fixed')) return 'tasks_fixed';
  if (path === '/v3/serp/engA/events/task_post') return 'events_task_post';
  const api = path.split('/')[2] ?? '';
  if (api === 'serp' || api === 'keywords_data' || api === 'domain_analytics' || api === 'svc_labs') return 'serp_keywords_domain';
  if (path.startsWith('/v3/ai_optimization/ai_keyword_data/')) return 'serp_keywords_domain';
  if (api === 'backlinks' || api === 'on_page') return 'backlinks_on_page';
  return 'v3_other';
}
