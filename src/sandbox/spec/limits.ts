/**
 * The spec's limits, as the emulator reads them: request rules of each request table,
 * tasks per POST, rate families, look-back windows. Every entry names the section of
 * /work/shared/spec/service-interface.md it comes from. Where the spec is silent and the
 * emulator had to choose, the choice is in ../readings.ts, not here.
 */
import { READINGS } from '../readings.js';
import type { FamilyId } from './endpoint.js';
import type { FieldRule, RequestRules } from './rules.js';

const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------
// Rate families: the Limits table, one row per family.
// ---------------------------------------------------------------------------------------

/** Calls per minute of each family (Limits table; "a higher rate limit can be requested from support"). */
export const FAMILY_PER_MINUTE: Readonly<Record<FamilyId, number>> = {
  chat: 60, // Limits: "Chat | 60 calls per minute"
  v1_other: 120, // Limits: "Other `/v1` | 120 per minute"
  serp_keywords_domain: 60, // Limits: "SERP, keyword and domain-analysis endpoints | 60 per minute"
  backlinks_on_page: 30, // Limits: "Backlinks, on-page | 30 per minute"
  v3_other: 120, // Limits: "Other `/v3` | 120 per minute"
  appendix_status: 10, // Limits: "`appendix/status` | 10 per minute"
  id_list: 10, // Limits: "`{api}/id_list` | 10 per minute; at most 1000 ids per call"
  tasks_fixed: 20, // Limits: "`tasks_fixed` | 20 per minute; at most 1000 tasks per call"
  events_task_post: 2000, // Limits: "Events `task_post` | 2000 calls per minute; 100 tasks per POST"
};

/**
 * The family of a path, by the Limits table: the specific rows (`appendix/status`,
 * `{api}/id_list`, `tasks_fixed`, events `task_post`) first, then by api. Which apis are
 * "keyword" endpoints (labs, AI keyword data) is a reading: READINGS.keywordFamily.
 */
export function familyOfPath(path: string): FamilyId {
  if (path.startsWith('/v1/')) return path.startsWith('/v1/chat/') ? 'chat' : 'v1_other'; // image generation is a chat call
  if (path === '/v3/appendix/status') return 'appendix_status';
  if (/^\/v3\/[^/]+\/id_list$/.test(path)) return 'id_list';
  if (path.endsWith('/tasks_fixed')) return 'tasks_fixed';
  if (path === '/v3/serp/engA/events/task_post') return 'events_task_post';
  const api = path.split('/')[2] ?? '';
  if (api === 'serp' || api === 'keywords_data' || api === 'domain_analytics') return 'serp_keywords_domain';
  if (READINGS.keywordFamily.value.some((prefix) => path.startsWith(prefix))) return 'serp_keywords_domain';
  if (api === 'backlinks' || api === 'on_page') return 'backlinks_on_page';
  return 'v3_other';
}

// ---------------------------------------------------------------------------------------
// Counts per call.
// ---------------------------------------------------------------------------------------

export const PER_CALL = {
  /** Limits: "Sandbox asynchronous POST | 100 tasks per request" (production 1 or 100: READINGS.asyncTasksPerPost). */
  asyncTasksPerPost: READINGS.asyncTasksPerPost.value,
  /** Limits: "Events `task_post` | ... 100 tasks per POST (extra tasks give error 40006)". */
  eventsTasksPerPost: 100,
  /** Live POSTs: the spec gives no count (READINGS.liveTasksPerPost). */
  liveTasksPerPost: READINGS.liveTasksPerPost.value,
  /** Limits: "`webhook_resend` | 100 task ids per call"; Events: "up to 100 task ids". */
  webhookResendIds: 100,
  /** Limits: "`{api}/id_list` | ... at most 1000 ids per call"; id_list table: "`limit` ... range 1-1000". */
  idListLimit: 1000,
  /** `errors` request table: "`limit` ... default 1000; range 1-1000". */
  errorsLimit: 1000,
  /** `errors` and `id_list` tables: "`offset` ... maximum 100000000". */
  maxOffset: 100_000_000,
  /** Limits: "`tasks_fixed` | ... at most 1000 tasks per call". */
  tasksFixed: 1000,
} as const;

// ---------------------------------------------------------------------------------------
// Time rules.
// ---------------------------------------------------------------------------------------

export const WINDOWS = {
  /** Limits: "`errors` endpoints | look-back 7 days"; errors table: "not earlier than 7 days ago". */
  errorsLookBackMs: 7 * DAY_MS,
  /** Limits: "`id_list` look-back | 1 month with metadata, 6 months without". */
  idListMonthsWithMetadata: 1,
  idListMonthsWithout: 6,
  /** Limits: "`tasks_fixed` | ... from the last 24 hours"; task lifecycle: "not listed after 24 hours uncollected". */
  tasksFixedMs: DAY_MS,
  /** Events: "no answer within 10 seconds"; Limits: "Callback server answer | 10 seconds". */
  callbackAnswerMs: 10_000,
  /** Events: "HTTP status below 200 or above 300" fails a callback, so 200 to 300 (300 included) is an answer. */
  callbackOkStatus: { min: 200, max: 300 },
  /** on-page resources: "results are retrievable for 30 days after submission". */
  onPageResultsMs: 30 * DAY_MS,
} as const;

/**
 * `months` calendar months before `now`, the same time of day; a day the target month lacks
 * is read as that month's last day (READINGS.monthBack: the spec says "1 month back", not how
 * to count it).
 */
export function monthsBack(nowMs: number, months: number): number {
  const now = new Date(nowMs);
  if (READINGS.monthBack.value === '30-days') return nowMs - months * 30 * DAY_MS;
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth() - months;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(
    y,
    m,
    Math.min(now.getUTCDate(), last),
    now.getUTCHours(),
    now.getUTCMinutes(),
    now.getUTCSeconds(),
    now.getUTCMilliseconds(),
  );
}

/** Earliest `datetime_from` of an `id_list` query (id_list table: "earliest 1 month back when `include_metadata` is true, 6 months back when false"). */
export function idListEarliest(nowMs: number, includeMetadata: boolean): number {
  return monthsBack(nowMs, includeMetadata ? WINDOWS.idListMonthsWithMetadata : WINDOWS.idListMonthsWithout);
}

// ---------------------------------------------------------------------------------------
// Request tables.
// ---------------------------------------------------------------------------------------

/** Many tables: "`tag` | string | optional; at most 255 characters; echoed in `data`". */
const tag: FieldRule = { type: 'text', maxChars: 255 };

/** Events table: "`pingback_url` ... `postback_url` ... `postback_data` required with `postback_url`". */
const callbackFields = {
  pingback_url: { type: 'text', format: 'url' },
  postback_url: { type: 'text', format: 'url' },
} as const satisfies Record<string, FieldRule>;

/**
 * Engine A events `task_post` parameters (the one SERP request table the spec spells out).
 * Refuses fields the table does not list (READINGS.unlistedFields).
 */
export const EVENTS_TASK: RequestRules = {
  fields: {
    // "`keyword` | required; at most 700 characters; `%##` is decoded, `+` becomes a space"
    keyword: { type: 'text', required: true, nonEmpty: true, maxChars: 700, countDecoded: READINGS.keywordLength.value === 'decoded' },
    location_code: { type: 'integer', min: 1 }, // "required unless `location_name` or `location_coordinate` is given"
    location_name: { type: 'text', nonEmpty: true }, // "alternative to the other two location fields"
    location_coordinate: { type: 'text', format: 'coordinate' }, // "`latitude,longitude,radius`; up to 7 decimals"
    // "optional; default is an official language of the location; English (`en`) is supported" (a code: READINGS.languageCode)
    language_code: { type: 'text', nonEmpty: true, minChars: READINGS.languageCode.value },
    language_name: { type: 'text', nonEmpty: true }, // "alternative to `language_code`"
    depth: { type: 'integer', min: 1, max: 700 }, // "optional; default 10; maximum 700"
    max_crawl_pages: { type: 'integer', min: 1, max: 100 }, // "optional; maximum 100"
    priority: { type: 'integer', oneOf: [1, 2] }, // "1 = normal (default), 2 = high (extra charge)"
    os: { type: 'text', oneOf: ['windows', 'macos'] }, // "`windows` (default) or `macos`"
    date_range: { type: 'text', oneOf: ['today', 'tomorrow', 'week', 'weekend', 'next_week', 'month', 'next_month'] },
    se_domain: { type: 'text' }, // "chosen automatically from the location, can be set manually"
    tag,
    ...callbackFields,
    postback_data: { type: 'text', oneOf: ['advanced', 'html'] }, // "`advanced` (examples also pass `html`)"
    url: { type: 'text', format: 'url' }, // "appears in examples as a way to pass a complete query address"
  },
  unknown: 'refuse',
  cross: [
    { rule: 'one-of', fields: ['location_code', 'location_name', 'location_coordinate'] },
    { rule: 'required-with', field: 'postback_data', with: 'postback_url' },
    { rule: 'radius', field: 'location_coordinate', min: 199.9, max: 199999 }, // "radius between 199.9 and 199999"
  ],
};

/**
 * Other SERP tasks (organic and the other types): their request parameters are "not shown";
 * READINGS.serpRules applies the events table to the fields it names (and `device`, `os` of
 * the v3 notes, `target`), letting other fields through.
 */
export const SERP_TASK: RequestRules = {
  fields: {
    ...EVENTS_TASK.fields,
    // Versioning 8: "device/OS combinations (desktop with `windows` or `macos`, mobile with `android` or `ios`)"
    device: { type: 'text', oneOf: ['desktop', 'mobile'] },
    os: { type: 'text', oneOf: ['windows', 'macos', 'android', 'ios'] },
    // Versioning 8: "ranking for a site via SERP `target` or filtering"
    target: { type: 'text', nonEmpty: true },
    // Path mapping: "SERP result | `task_get/regular/`, `.../advanced/`, `.../html/`"
    postback_data: { type: 'text', oneOf: ['regular', 'advanced', 'html'] },
  },
  unknown: 'pass',
  cross: [...(EVENTS_TASK.cross ?? []), { rule: 'device-os' }],
};

const location = {
  location_code: { type: 'integer', min: 1 },
  location_name: { type: 'text', nonEmpty: true },
  language_code: { type: 'text', nonEmpty: true },
  language_name: { type: 'text', nonEmpty: true },
} as const satisfies Record<string, FieldRule>;

/** Limits: "Batch search volume (v3 keywords data) | up to 700 keywords per task at equal price". Other fields not shown. */
export const SEARCH_VOLUME_TASK: RequestRules = {
  fields: {
    keywords: { type: 'texts', required: true, minItems: 1, maxItems: READINGS.searchVolumeKeywords.value, nonEmpty: true },
    ...location,
    language_code: { type: 'text', nonEmpty: true, minChars: READINGS.languageCode.value },
    tag,
    ...callbackFields,
  },
  unknown: 'pass',
  cross: [{ rule: 'required-with', field: 'postback_data', with: 'postback_url' }],
};

/** Keywords for keywords and ad traffic (path mapping only: fields not shown; a keyword list is their input). */
export const KEYWORD_LIST_TASK: RequestRules = {
  fields: { keywords: { type: 'texts', required: true, minItems: 1, nonEmpty: true }, tag, ...callbackFields },
  unknown: 'pass',
  cross: [{ rule: 'required-with', field: 'postback_data', with: 'postback_url' }],
};

/** Keywords for site (path mapping only: fields not shown; a target site is its input). */
export const TARGET_TASK: RequestRules = {
  fields: { target: { type: 'text', required: true, nonEmpty: true }, tag, ...callbackFields },
  unknown: 'pass',
  cross: [{ rule: 'required-with', field: 'postback_data', with: 'postback_url' }],
};

/** Trends: "`keywords` (array of strings; up to 5 compared on a relative scale), `location_code` (integer), `date_from` and `date_to` (`yyyy-mm-dd`)". */
export const TRENDS_TASK: RequestRules = {
  fields: {
    keywords: { type: 'texts', required: true, minItems: 1, maxItems: 5, nonEmpty: true },
    location_code: { type: 'integer', min: 1 },
    date_from: { type: 'text', format: 'date' },
    date_to: { type: 'text', format: 'date' },
    tag,
  },
  unknown: 'pass', // "Other request parameters ... of the trends endpoints: not shown."
  cross: [{ rule: 'after', field: 'date_to', than: 'date_from', orEqual: true }],
};

/** Keyword-search-volume request (AI keyword data), the spec's table. */
export const AI_KEYWORD_VOLUME_TASK: RequestRules = {
  fields: {
    // "required; UTF-8; at most 1000 keywords; each at most 250 characters; converted to lowercase"
    keywords: { type: 'texts', required: true, minItems: 1, maxItems: 1000, nonEmpty: true, maxChars: 250 },
    ...location, // "required unless `location_code` is given" and the like
    tag, // "optional; at most 255 characters; echoed in `data`"
  },
  unknown: 'pass',
  cross: [
    { rule: 'one-of', fields: ['location_name', 'location_code'] },
    { rule: 'one-of', fields: ['language_name', 'language_code'] },
  ],
};

/**
 * LLM response request (AI optimization), the spec's table. The reasoning-model bounds
 * (`max_output_tokens` at least 1024, no `temperature`) need the models list and are checked
 * with it (data/llm-results.ts).
 */
export const LLM_RESPONSE_TASK: RequestRules = {
  fields: {
    user_prompt: { type: 'text', required: true, nonEmpty: true, maxChars: 500 }, // "required; at most 500 characters"
    model_name: { type: 'text', required: true, nonEmpty: true }, // "required; a base name selects its latest version"
    max_output_tokens: { type: 'integer', min: 16, max: 4096 }, // "maximum 4096; minimum 1024 for reasoning models and 16 for non-reasoning"
    temperature: { type: 'number', min: 0, max: 2 }, // "0 to 2; default 0.94"
    top_p: { type: 'number', min: 0, max: 1 }, // "0 to 1; default 0.92"
    web_search: { type: 'boolean' },
    tag,
  },
  unknown: 'pass', // "Request parameters of the LLM responses endpoint after `web_search`: not shown."
  cross: [{ rule: 'not-both', fields: ['temperature', 'top_p'] }], // "cannot be combined with `temperature` in one request"
};

/** On-page: "array of objects with `target` (string) creating a crawl task"; other fields not shown. */
export const ON_PAGE_TASK: RequestRules = {
  fields: { target: { type: 'text', required: true, nonEmpty: true }, tag, ...callbackFields },
  unknown: 'pass',
  cross: [{ rule: 'required-with', field: 'postback_data', with: 'postback_url' }],
};

/** `on_page/resources` request parameters, the spec's table (every field listed, so others are refused). */
export const ON_PAGE_RESOURCES_TASK: RequestRules = {
  fields: {
    id: { type: 'text', required: true, nonEmpty: true }, // "task id returned by `task_post`"
    url: { type: 'text', nonEmpty: true }, // "return meta data for resources on this page"
    limit: { type: 'integer', min: 1, max: 1000 }, // "default 100; maximum 1000"
    offset: { type: 'integer', min: 0, max: 2_000_000 }, // "default 0; maximum 2000000"
    filters: { type: 'filters', maxConditions: 8 }, // "at most 8 conditions"
    relevant_pages_filters: { type: 'filters', maxConditions: 8 }, // "same rules as the pages endpoint; at most 8 conditions"
    order_by: { type: 'texts', maxItems: 3, format: 'order-rule' }, // "format `<field>,<asc or desc>`; at most 3 rules"
    search_after_token: { type: 'text', nonEmpty: true }, // "token from the previous response"
    tag,
  },
  unknown: 'refuse',
};

/** `on_page/pages` and `links`: "pages of a crawl task", "links of a crawl task"; the resources table's rules for the fields they share. */
export const ON_PAGE_READ_TASK: RequestRules = {
  fields: {
    id: { type: 'text', required: true, nonEmpty: true },
    filters: { type: 'filters', maxConditions: 8 },
    order_by: { type: 'texts', maxItems: 3, format: 'order-rule' },
    tag,
  },
  unknown: 'pass',
};

/** Lighthouse: "The `on_page/lighthouse` POST accepts a version; the default version applies when none is given". */
export const LIGHTHOUSE_TASK: RequestRules = {
  fields: { url: { type: 'text', required: true, format: 'url' }, version: { type: 'text', nonEmpty: true }, tag },
  unknown: 'pass',
};

/** Families whose request fields are "not shown" (labs, backlinks, merchant, ...): only the `tag` rule every table repeats. */
export const UNSHOWN_TASK: RequestRules = { fields: { tag }, unknown: 'pass' };

// ---------------------------------------------------------------------------------------
// /v1 bodies.
// ---------------------------------------------------------------------------------------

/** Chat completion (text): "Accepted model ids are `chat5.6-terra` and `chat5.6-luna`" and the two legacy aliases. */
export const CHAT_MODELS = ['chat5.6-terra', 'chat5.6-luna'] as const;
/** "`chat5.4` (maps to terra) and `chat5.4-mini` (maps to luna) are legacy aliases kept only for old workflows." */
export const CHAT_ALIASES: Readonly<Record<string, (typeof CHAT_MODELS)[number]>> = {
  'chat5.4': 'chat5.6-terra',
  'chat5.4-mini': 'chat5.6-luna',
};

export const CHAT_BODY: RequestRules = {
  fields: {
    model: { type: 'text', required: true, oneOf: [...CHAT_MODELS, ...Object.keys(CHAT_ALIASES)] },
    messages: { type: 'messages', required: true },
    stream: { type: 'boolean' },
  },
  unknown: 'pass', // "Parameters of `/v1/chat/completions` other than ...: not shown."
};

/** Chat completion (image generation): "`imgmodel-3.1-flash-image` (stable public name)". */
export const IMAGE_MODEL = 'imgmodel-3.1-flash-image';

export const IMAGE_BODY: RequestRules = {
  fields: {
    model: { type: 'text', required: true, oneOf: [IMAGE_MODEL] },
    messages: { type: 'messages', required: true }, // "prompt as user message"
    stream: { type: 'boolean', only: false }, // "must be `false`"; Errors: "`stream` true, `n` not 1, invalid size | 400"
    n: { type: 'integer', oneOf: [1] }, // "fixed at 1"
    size: { type: 'text', format: 'image-size' }, // "`<width>x<height>`; default `1024x1024`; maximum 4K"
  },
  unknown: 'pass',
};

/**
 * Embeddings request table: three models, `input` one text or an array, `encoding_format`
 * float or base64, `dimensions` "only `text-embedding-3-*`". The models' native sizes are
 * not in the spec (READINGS.embeddingDimensions).
 */
export const EMBEDDING_MODELS = ['text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002'] as const;

export const EMBEDDINGS_BODY: RequestRules = {
  fields: {
    model: { type: 'text', required: true, oneOf: EMBEDDING_MODELS },
    input: { type: 'text-or-texts', required: true },
    encoding_format: { type: 'text', oneOf: ['float', 'base64'] },
    dimensions: { type: 'integer', min: 1 },
    user: { type: 'text' },
  },
  unknown: 'refuse',
  cross: [
    { rule: 'only-when', field: 'dimensions', when: 'model', values: ['text-embedding-3-small', 'text-embedding-3-large'] },
    { rule: 'at-most-by', field: 'dimensions', when: 'model', limits: READINGS.embeddingDimensions.value },
  ],
};
