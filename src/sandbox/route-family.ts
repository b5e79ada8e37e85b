import type { Endpoint, FamilyId } from '../catalog/index.js';

/**
 * The rate-limit family of a call: the catalog's when the path is an endpoint of the
 * catalog, otherwise read from the path by the spec's Limits table (the `/v1` paths and
 * the utilities the emulator serves on its own).
 */
export function routeFamily(path: string, endpoint?: Endpoint): FamilyId {
  if (endpoint) return endpoint.family;
  if (path === '/v1/chat/completions') return 'chat';
  if (path.startsWith('/v1/')) return 'v1_other';
  if (path === '/v3/appendix/status') return 'appendix_status';
  if (/^\/v3\/[^/]+\/id_list$/.test(path)) return 'id_list';
  if (path.endsWith('/tasks_fixed')) return 'tasks_fixed';
  if (path === '/v3/serp/engA/events/task_post') return 'events_task_post';
  const api = path.split('/')[2] ?? '';
  if (api === 'serp' || api === 'keywords_data' || api === 'domain_analytics') return 'serp_keywords_domain';
  if (api === 'backlinks' || api === 'on_page') return 'backlinks_on_page';
  return 'v3_other';
}
