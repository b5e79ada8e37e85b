import { ENDPOINTS, type Endpoint } from './endpoints.js';

export * from './endpoints.js';
export * from './families.js';
export * from './serp-task.js';

const byId = new Map(ENDPOINTS.map((e) => [e.id, e]));

/** The endpoint with this id; throws on a typo, since ids are code, not input. */
export function endpoint(id: string): Endpoint {
  const e = byId.get(id);
  if (!e) throw new Error(`unknown endpoint id ${id}`);
  return e;
}

/** Fills a path template (`{id}`) with a task id. */
export function endpointPath(e: Endpoint, taskId?: string): string {
  if (!e.path.includes('{id}')) return e.path;
  if (!taskId) throw new Error(`${e.id} needs a task id`);
  return e.path.replace('{id}', encodeURIComponent(taskId));
}

/**
 * Finds the endpoint a concrete path belongs to (used by the emulator to route and by
 * the loader to pick a normalizer). Template `{id}` matches one path segment.
 */
export function matchEndpoint(method: string, path: string): { endpoint: Endpoint; taskId?: string } | undefined {
  const clean = path.replace(/\/+$/, '');
  for (const e of ENDPOINTS) {
    if (e.method !== method) continue;
    if (!e.path.includes('{id}')) {
      if (e.path === clean) return { endpoint: e };
      continue;
    }
    const [head] = e.path.split('{id}');
    if (head && clean.startsWith(head)) {
      const rest = clean.slice(head.length);
      if (rest && !rest.includes('/')) return { endpoint: e, taskId: decodeURIComponent(rest) };
    }
  }
  return undefined;
}
