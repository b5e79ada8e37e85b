import type { Endpoint } from './spec/index.js';

/**
 * `[api, function]` of a call, as `user_data` groups its statistics: the `/v3` api
 * segment (`serp`, `appendix`, …) or `v1`, and the endpoint mode (`task_post`, `live`,
 * …) or, for paths outside the endpoint table, the last path word that is not a task id.
 */
export function callName(path: string, endpoint?: Endpoint): [string, string] {
  const segs = path.replace(/\.ai$/, '').split('/').filter(Boolean);
  const api = segs[0] === 'v1' ? 'v1' : (segs[1] ?? 'unknown');
  if (endpoint && endpoint.mode !== 'utility') return [api, endpoint.mode];
  const words = segs.filter((s) => !/^[0-9a-f-]{36}$/i.test(s));
  return [api, words.slice(2).join('/') || 'unknown'];
}
