/**
 * The endpoint catalog: every endpoint of the service interface as data, read by the
 * client (validation, rate families, retries), the planner (tasks per POST), the emulator
 * (routing, the same schemas) and the loader (result kinds).
 *
 * Id scheme: the path after `/v3` (or the whole path for `/v1`), `/` turned to `.`, the
 * `{id}` placeholder dropped and other placeholders kept by name:
 * - `serp.engA.organic.task_post`, `serp.engA.organic.tasks_ready`,
 *   `serp.engA.organic.task_get.advanced`, `serp.engA.organic.live.regular`,
 *   `serp.engA.organic.tasks_fixed` (the 21 `{engine}/{type}` pairs the same way);
 * - `keywords_data.engA_ads.search_volume.live`, `... .task_get` (no format segment);
 * - `svc_labs.engA.ranked_keywords.live`, `on_page.resources`, `appendix.user_data`;
 * - `serp.errors`, `merchant.id_list` (the 11 `{api}` values);
 * - `serp.engA.locations.country_code` for `/v3/serp/engA/locations/{country_code}`;
 * - `v1.chat.completions`, `v1.embeddings`, and the one exception to the rule,
 *   `v1.chat.completions.image`, which shares its path with text chat and is told apart by
 *   the body's `model` (see {@link matchEndpoint}).
 * `.ai` variants are not separate entries: an entry with `ai: true` also answers at
 * `{path}.ai` (POST) or `{path}/{id}.ai` (GET); see {@link aiPath}.
 */
import { ENDPOINTS, type Endpoint } from './endpoints.js';
import { IMAGE_MODEL } from './schemas/v1-bodies.js';

export * from './endpoints.js';
export * from './families.js';
export * from './family-of.js';
export * from './serp-task.js';
export * from './service-keyword.js';
export * from './schemas/common.js';
export * from './schemas/events-task.js';
export * from './schemas/keyword-tasks.js';
export * from './schemas/llm-response-task.js';
export * from './schemas/on-page-tasks.js';
export * from './schemas/utility-tasks.js';
export * from './schemas/v1-bodies.js';

const byId = new Map(ENDPOINTS.map((e) => [e.id, e]));

/** The endpoint with this id; throws on a typo, since ids are code, not input. */
export function endpoint(id: string): Endpoint {
  const e = byId.get(id);
  if (!e) throw new Error(`unknown endpoint id ${id}`);
  return e;
}

/**
 * The ready list and the result endpoint of a `task_post`: `task_get/advanced` where the
 * function has result formats, else `task_get`. Undefined where the catalog has none (a
 * live-only function). Read by the collector and by `pipeline plan`.
 */
export function taskFunctionOf(post: Endpoint): { ready: Endpoint; get: Endpoint } | undefined {
  const fn = post.id.replace(/\.task_post$/, '');
  const ready = byId.get(`${fn}.tasks_ready`);
  const get = byId.get(`${fn}.task_get.advanced`) ?? byId.get(`${fn}.task_get`);
  return ready && get ? { ready, get } : undefined;
}

/** Path parameters: a task id alone, or named values (`{ country_code: 'us' }`). */
export type PathParams = string | Readonly<Record<string, string>>;

/** Fills a path template's placeholders (`{id}`, `{country_code}`), URL-encoded. */
export function endpointPath(e: Endpoint, params?: PathParams): string {
  return e.path.replace(/\{([a-z_]+)\}/g, (_m, name: string) => {
    const v = typeof params === 'string' ? (name === 'id' ? params : undefined) : params?.[name];
    if (v === undefined || v === '') throw new Error(`${e.id} needs ${name === 'id' ? 'a task id' : name}`);
    return encodeURIComponent(v);
  });
}

/** The `.ai` address of an entry (AI-optimized response at no extra charge). */
export function aiPath(e: Endpoint, params?: PathParams): string {
  if (!e.ai) throw new Error(`${e.id} has no .ai variant`);
  return `${endpointPath(e, params)}.ai`;
}

export interface EndpointMatch {
  endpoint: Endpoint;
  /** The `{id}` segment, decoded. */
  taskId?: string;
  /** Every placeholder of the template, decoded. */
  params: Record<string, string>;
  /** True when the path carried the `.ai` suffix. */
  ai: boolean;
}

const exact = new Map<string, Endpoint>();
const templated: Array<{ e: Endpoint; re: RegExp; names: string[] }> = [];
for (const e of ENDPOINTS) {
  if (!e.path.includes('{')) {
    const key = `${e.method} ${e.path}`;
    if (!exact.has(key)) exact.set(key, e); // the image entry shares text chat's path
    continue;
  }
  const names: string[] = [];
  const re = e.path
    .split(/(\{[a-z_]+\})/)
    .map((part) => {
      const m = /^\{([a-z_]+)\}$/.exec(part);
      if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(m[1]!);
      return '([^/]+)';
    })
    .join('');
  templated.push({ e, re: new RegExp(`^${re}$`), names });
}

/**
 * Finds the endpoint a concrete path belongs to (the emulator routes with it, the loader
 * picks a normalizer with it). Trailing slashes are ignored, a `.ai` suffix is recognised
 * on entries that have one, and a `/v1/chat/completions` body naming the image model
 * selects the image entry. Throws `URIError` on a malformed %-escape in a parameter.
 */
export function matchEndpoint(method: string, path: string, body?: unknown): EndpointMatch | undefined {
  const clean = path.replace(/\/+$/, '');
  // Suffix first: a task id segment would otherwise swallow `<uuid>.ai`.
  if (clean.endsWith('.ai')) {
    const m = find(method, clean.slice(0, -3));
    if (m?.endpoint.ai) return { ...m, ai: true };
  }
  const plain = find(method, clean);
  return plain && pickV1(plain, body);
}

function find(method: string, path: string): EndpointMatch | undefined {
  const e = exact.get(`${method} ${path}`);
  if (e) return { endpoint: e, params: {}, ai: false };
  for (const t of templated) {
    if (t.e.method !== method) continue;
    const m = t.re.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    t.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)));
    return { endpoint: t.e, params, ai: false, ...(params.id === undefined ? {} : { taskId: params.id }) };
  }
  return undefined;
}

function pickV1(m: EndpointMatch, body: unknown): EndpointMatch {
  if (m.endpoint.id !== 'v1.chat.completions') return m;
  const model = (body as { model?: unknown } | undefined)?.model;
  return model === IMAGE_MODEL ? { ...m, endpoint: endpoint('v1.chat.completions.image') } : m;
}

/** The chat entry for a model: image generation for the image model, text chat otherwise. */
export function chatEndpointFor(model: string): Endpoint {
  return endpoint(model === IMAGE_MODEL ? 'v1.chat.completions.image' : 'v1.chat.completions');
}
export * from './migration.js';
export * from './locations.js';
