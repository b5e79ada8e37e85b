/**
 * The emulator's endpoint table, written from the spec's Endpoints, Sandbox and Versioning
 * (path mapping) sections. One row per method and path; the handlers read it through
 * {@link matchEndpoint} and {@link endpointById}. Defaults of a row (from the spec's
 * "What the service does" and Billing): live and `task_post` are POST and charged,
 * `tasks_ready`, `task_get` and the utilities are GET and free; tasks of `task_post` take
 * callbacks (Events: "The service sends callbacks for standard-mode tasks"); `.ai` answers
 * every live, task-creation and task-get endpoint of `/v3` (AI-optimized variants: "The
 * suffix works for all live endpoints and task-get endpoints").
 */
import type { Endpoint, EndpointMode, ResultFormat, ResultKind } from './endpoint.js';
import {
  AI_KEYWORD_VOLUME_TASK,
  CHAT_BODY,
  EMBEDDINGS_BODY,
  EVENTS_TASK,
  familyOfPath,
  IMAGE_BODY,
  IMAGE_MODEL,
  KEYWORD_LIST_TASK,
  LIGHTHOUSE_TASK,
  LLM_RESPONSE_TASK,
  ON_PAGE_READ_TASK,
  ON_PAGE_RESOURCES_TASK,
  ON_PAGE_TASK,
  PER_CALL,
  SEARCH_VOLUME_TASK,
  SERP_TASK,
  TARGET_TASK,
  TRENDS_TASK,
  UNSHOWN_TASK,
} from './limits.js';
import { READINGS } from '../readings.js';
import type { RequestRules } from './rules.js';

interface Row {
  path: string;
  mode: EndpointMode;
  method?: 'GET' | 'POST';
  id?: string;
  format?: ResultFormat;
  request?: RequestRules;
  maxTasksPerPost?: number;
  charged?: boolean;
  ai?: boolean;
  resultKind: ResultKind;
}

function row(r: Row): Endpoint {
  const v1 = r.path.startsWith('/v1/');
  const method = r.method ?? (r.mode === 'live' || r.mode === 'task_post' ? 'POST' : 'GET');
  const segs = r.path.split('/').filter(Boolean);
  const e: Endpoint = {
    id:
      r.id ??
      (v1 ? segs : segs.slice(1))
        .filter((s) => s !== '{id}')
        .map((s) => s.replace(/^\{(.+)\}$/, '$1'))
        .join('.'),
    method,
    path: r.path,
    api: v1 ? 'v1' : (segs[1] ?? ''),
    family: familyOfPath(r.path),
    mode: r.mode,
    callbacks: r.mode === 'task_post',
    charged: r.charged ?? (r.mode === 'live' || r.mode === 'task_post'),
    ai: r.ai ?? (!v1 && (r.mode === 'live' || r.mode === 'task_post' || r.mode === 'task_get')),
    resultKind: r.resultKind,
  };
  const max =
    r.maxTasksPerPost ??
    (v1 ? undefined : r.mode === 'task_post' ? PER_CALL.asyncTasksPerPost : r.mode === 'live' ? PER_CALL.liveTasksPerPost : undefined);
  if (max !== undefined) e.maxTasksPerPost = max;
  if (r.format) e.format = r.format;
  if (r.request) e.request = r.request;
  return e;
}

/** A task-based function: `task_post`, `tasks_ready`, `task_get` per format (none: `task_get/{id}`), and its live paths. */
function taskFunction(
  base: string,
  o: {
    formats: readonly ResultFormat[];
    live?: readonly ResultFormat[] | 'plain';
    request: RequestRules;
    kind: ResultKind;
    maxTasksPerPost?: number;
  },
): Endpoint[] {
  const out = [
    row({
      path: `${base}/task_post`,
      mode: 'task_post',
      request: o.request,
      resultKind: o.kind,
      ...(o.maxTasksPerPost ? { maxTasksPerPost: o.maxTasksPerPost } : {}),
    }),
    row({ path: `${base}/tasks_ready`, mode: 'tasks_ready', resultKind: 'tasks_ready' }),
  ];
  if (o.formats.length === 0) out.push(row({ path: `${base}/task_get/{id}`, mode: 'task_get', resultKind: o.kind }));
  for (const format of o.formats) out.push(row({ path: `${base}/task_get/${format}/{id}`, mode: 'task_get', format, resultKind: o.kind }));
  if (o.live === 'plain') out.push(row({ path: `${base}/live`, mode: 'live', request: o.request, resultKind: o.kind }));
  else
    for (const format of o.live ?? [])
      out.push(row({ path: `${base}/live/${format}`, mode: 'live', format, request: o.request, resultKind: o.kind }));
  return out;
}

/** Endpoints: "`{engine}/{type}` in SERP paths uses these engine/type pairs: ...". */
export const SERP_PAIRS: ReadonlyArray<readonly [string, string]> = [
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
];

/** Endpoints: "`{api}` (for `errors` and `id_list`) is one of: ...". */
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

/** SERP types searched by an image, a dataset or a video rather than a keyword: only the rules every table shares. */
const NOT_BY_KEYWORD = new Set(['search_by_image', 'dataset_info', 'video_info', 'video_subtitles', 'video_comments']);

/**
 * A SERP function: path mapping "SERP task creation / ready list / result
 * `task_get/regular/`, `.../advanced/`, `.../html/`", "Live SERP `live/regular/`", "Live
 * extended SERP `live/advanced/`", and its `tasks_fixed` (Utility endpoints:
 * `GET /v3/serp/{engine}/{type}/tasks_fixed`). The other types' layout is organic's, except
 * images, whose mapping row names `task_get/advanced/` alone (READINGS.imageFormats).
 */
function serpFunction(engine: string, type: string): Endpoint[] {
  const base = `/v3/serp/${engine}/${type}`;
  const events = engine === 'engA' && type === 'events';
  // Path mapping: "Images | `/v3/serp/engA/images/task_post/`, `tasks_ready/`, `task_get/advanced/`" (READINGS.imageFormats).
  const images = engine === 'engA' && type === 'images';
  const imageFormats = READINGS.imageFormats.value as readonly ResultFormat[];
  return [
    ...taskFunction(base, {
      formats: images ? imageFormats : ['regular', 'advanced', 'html'],
      live: images ? imageFormats.filter((f) => f !== 'html') : ['regular', 'advanced'],
      request: events ? EVENTS_TASK : NOT_BY_KEYWORD.has(type) ? UNSHOWN_TASK : SERP_TASK,
      kind: 'serp',
      // Engine A events: "create an events task (array of up to 100 objects)".
      ...(events ? { maxTasksPerPost: PER_CALL.eventsTasksPerPost } : {}),
    }),
    row({ path: `${base}/tasks_fixed`, mode: 'utility', resultKind: 'tasks_fixed' }),
  ];
}

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

const live = (path: string, resultKind: ResultKind, request: RequestRules = UNSHOWN_TASK, extra: Partial<Row> = {}) =>
  row({ path, mode: 'live', request, resultKind, ...extra });
const get = (path: string, resultKind: ResultKind, ai = false) => row({ path, mode: 'utility', method: 'GET', resultKind, ai });
const dataTasks = (base: string, formats: ResultFormat[], kind: ResultKind) => taskFunction(base, { formats, request: UNSHOWN_TASK, kind });

/** Every endpoint the emulator serves. */
export const ENDPOINTS: readonly Endpoint[] = [
  // --- SERP (Endpoints: the 21 pairs; Engine A events; Utility endpoints) ---
  ...SERP_PAIRS.flatMap(([engine, type]) => serpFunction(engine, type)),
  // Engine A events table: "POST /v3/serp/engA/v2/live/advanced/", "v2/task_post/", "GET .../v2/task_get/advanced/"
  live('/v3/serp/engA/v2/live/advanced', 'serp', SERP_TASK, { format: 'advanced' }),
  row({ path: '/v3/serp/engA/v2/task_post', mode: 'task_post', request: SERP_TASK, resultKind: 'serp' }),
  row({ path: '/v3/serp/engA/v2/task_get/advanced/{id}', mode: 'task_get', format: 'advanced', resultKind: 'serp' }),
  // Utility endpoints; AI-optimized variants: "GET /v3/{path}/locations.ai", "GET /v3/{path}/locations/{country_code}.ai"
  get('/v3/serp/engA/locations', 'locations', true),
  get('/v3/serp/engA/locations/{country_code}', 'locations', true),
  get('/v3/serp/engA/languages', 'languages'),
  get('/v3/serp/engA/events/locations', 'locations', true),
  get('/v3/serp/endpoints', 'endpoint_list'),

  // --- Keywords data (path mapping: "with `live/`, `task_post/`, `tasks_ready/`, `task_get/`"; Sandbox table: engA search_volume) ---
  ...taskFunction('/v3/keywords_data/engA_ads/search_volume', {
    formats: [],
    live: 'plain',
    request: SEARCH_VOLUME_TASK,
    kind: 'search_volume',
  }),
  ...taskFunction('/v3/keywords_data/engA_ads/keywords_for_site', {
    formats: [],
    live: 'plain',
    request: TARGET_TASK,
    kind: 'keywords_for_site',
  }),
  ...taskFunction('/v3/keywords_data/engA_ads/keywords_for_keywords', {
    formats: [],
    live: 'plain',
    request: KEYWORD_LIST_TASK,
    kind: 'keywords_for_keywords',
  }),
  ...taskFunction('/v3/keywords_data/engA_ads/ad_traffic_by_keywords', {
    formats: [],
    live: 'plain',
    request: KEYWORD_LIST_TASK,
    kind: 'ad_traffic',
  }),
  ...taskFunction('/v3/keywords_data/engA/search_volume', {
    formats: [],
    live: 'plain',
    request: SEARCH_VOLUME_TASK,
    kind: 'search_volume',
  }),
  // Trends (live only, POST, array body)
  ...(['explore', 'subregion_interests', 'demography', 'merged_data'] as const).map((fn) =>
    live(`/v3/keywords_data/svc_trends/${fn}/live`, 'trends', TRENDS_TASK),
  ),
  get('/v3/keywords_data/endpoints', 'endpoint_list'),

  // --- Labs, domain analytics, backlinks, content analysis (path mapping; Sandbox table) ---
  ...LABS.map(([fn, kind]) => live(`/v3/svc_labs/engA/${fn}/live`, kind)),
  get('/v3/svc_labs/locations_and_languages', 'locations'),
  live('/v3/domain_analytics/technologies/aggregation_technologies/live', 'domain_analytics'),
  live('/v3/backlinks/referring_domains/live', 'backlinks'),
  live('/v3/content_analysis/search/live', 'content_analysis'),

  // --- Merchant, app data, business data, reviews (path mapping; Sandbox table) ---
  ...dataTasks('/v3/merchant/engA/products', ['advanced', 'html'], 'merchant'),
  ...dataTasks('/v3/merchant/engA/sellers', ['advanced'], 'merchant'),
  live('/v3/merchant/engA/sellers/ad_url', 'merchant'), // "all POST unless marked GET"
  ...dataTasks('/v3/merchant/engA/product_spec', ['advanced'], 'merchant'),
  ...dataTasks('/v3/merchant/amazon/products', ['advanced', 'html'], 'merchant'),
  ...dataTasks('/v3/merchant/amazon/asin', ['advanced'], 'merchant'),
  ...dataTasks('/v3/app_data/engA/app_searches', ['advanced'], 'app_data'),
  ...dataTasks('/v3/business_data/engA/hotel_info', ['advanced'], 'business_data'),
  ...dataTasks('/v3/reviews/engA', [], 'reviews'),

  // --- AI optimization (its Endpoints table) ---
  get('/v3/ai_optimization/ai_keyword_data/available_filters', 'available_filters'),
  live('/v3/ai_optimization/ai_keyword_data/keywords_search_volume/live', 'ai_keyword_volume', AI_KEYWORD_VOLUME_TASK),
  get('/v3/ai_optimization/ai_keyword_data/locations_and_languages', 'locations'),
  live('/v3/ai_optimization/chat_llm/llm_responses/live', 'llm_response', LLM_RESPONSE_TASK),
  get('/v3/ai_optimization/chat_llm/llm_responses/models', 'llm_models'), // "Method and response ...: not shown"

  // --- On-page (its Endpoints table; Billing: "`on_page/resources` is listed as free") ---
  row({ path: '/v3/on_page/task_post', mode: 'task_post', request: ON_PAGE_TASK, resultKind: 'on_page_task' }),
  live('/v3/on_page/resources', 'on_page_resources', ON_PAGE_RESOURCES_TASK, { charged: false }),
  live('/v3/on_page/pages', 'on_page_pages', ON_PAGE_READ_TASK),
  live('/v3/on_page/links', 'on_page_links', ON_PAGE_READ_TASK),
  get('/v3/on_page/lighthouse/versions', 'lighthouse_versions'),
  live('/v3/on_page/lighthouse/live/json', 'lighthouse', LIGHTHOUSE_TASK), // "The `on_page/lighthouse` POST accepts a version"

  // --- Utilities (Utility endpoints; Billing: all free) ---
  get('/v3/appendix/status', 'api_status'),
  get('/v3/appendix/user_data', 'user_data'),
  row({
    path: '/v3/appendix/webhook_resend',
    mode: 'utility',
    method: 'POST',
    maxTasksPerPost: PER_CALL.webhookResendIds,
    resultKind: 'webhook_resend',
  }),
  get('/v3/appendix/errors', 'generic'), // Errors: "the errors appendix at `/v3/appendix/errors`"
  ...UTILITY_APIS.flatMap((api) => [
    row({ path: `/v3/${api}/errors`, mode: 'utility', method: 'POST', resultKind: 'errors' }),
    row({ path: `/v3/${api}/id_list`, mode: 'utility', method: 'POST', resultKind: 'id_list' }),
  ]),

  // --- /v1 (its Endpoints table): image generation shares the chat path, told apart by `model` ---
  row({ path: '/v1/chat/completions', mode: 'live', request: CHAT_BODY, resultKind: 'chat_completion' }),
  row({ id: 'v1.chat.completions.image', path: '/v1/chat/completions', mode: 'live', request: IMAGE_BODY, resultKind: 'image_generation' }),
  row({ path: '/v1/embeddings', mode: 'live', request: EMBEDDINGS_BODY, resultKind: 'embeddings' }),
];

const byId = new Map(ENDPOINTS.map((e) => [e.id, e]));

/** The row with this id; throws on an unknown id (ids are code, not input). */
export function endpointById(id: string): Endpoint {
  const e = byId.get(id);
  if (!e) throw new Error(`unknown endpoint id ${id}`);
  return e;
}

/** A row's path with `{id}` (and other placeholders) filled in, URL-encoded. */
export function endpointPath(e: Endpoint, id: string): string {
  return e.path.replace(/\{([a-z_]+)\}/g, () => encodeURIComponent(id));
}

export interface EndpointMatch {
  endpoint: Endpoint;
  taskId?: string;
  /** True when the path carried the `.ai` suffix. */
  ai: boolean;
}

const exact = new Map<string, Endpoint>();
const templated: Array<{ e: Endpoint; re: RegExp; names: string[] }> = [];
for (const e of ENDPOINTS) {
  if (!e.path.includes('{')) {
    if (!exact.has(`${e.method} ${e.path}`)) exact.set(`${e.method} ${e.path}`, e); // text chat keeps the shared path
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

function find(method: string, path: string): EndpointMatch | undefined {
  const e = exact.get(`${method} ${path}`);
  if (e) return { endpoint: e, ai: false };
  for (const t of templated) {
    if (t.e.method !== method) continue;
    const m = t.re.exec(path);
    if (!m) continue;
    const i = t.names.indexOf('id');
    return { endpoint: t.e, ai: false, ...(i < 0 ? {} : { taskId: decodeURIComponent(m[i + 1]!) }) };
  }
  return undefined;
}

/**
 * The row a request belongs to. Trailing slashes are ignored (the spec writes paths both
 * ways); `.ai` is recognised where the row takes it; a `/v1/chat/completions` body naming
 * the image model selects image generation. Throws `URIError` on a malformed %-escape.
 */
export function matchEndpoint(method: string, path: string, body?: unknown): EndpointMatch | undefined {
  const clean = path.replace(/\/+$/, '');
  if (clean.endsWith('.ai')) {
    const m = find(method, clean.slice(0, -3));
    if (m?.endpoint.ai) return { ...m, ai: true };
  }
  const m = find(method, clean);
  if (m?.endpoint.id === 'v1.chat.completions' && (body as { model?: unknown } | undefined)?.model === IMAGE_MODEL) {
    return { ...m, endpoint: endpointById('v1.chat.completions.image') };
  }
  return m;
}
