/**
 * The emulator's own words for an endpoint of the service interface
 * (/work/shared/spec/service-interface.md, "the spec" below). Written from the spec's text
 * inside the sandbox: the emulator imports nothing of the client's catalog, so a misreading
 * of the spec in the client shows up as a disagreement with the emulator instead of passing
 * every test (design.md, "The sandbox emulator").
 */
import type { RequestRules } from './rules.js';

/** What a call of this endpoint does in the task lifecycle (spec, "What the service does"). */
export type EndpointMode = 'live' | 'task_post' | 'tasks_ready' | 'task_get' | 'utility';

/** The three result formats of a SERP `task_get` (spec, path mapping: `regular`, `advanced`, `html`). */
export type ResultFormat = 'regular' | 'advanced' | 'html';

/**
 * Rate-limit families: one per row of the spec's Limits table that limits calls per minute
 * (see limits.ts). The names are the emulator's, shared with callers of `rateLimits`.
 */
export type FamilyId =
  | 'chat'
  | 'v1_other'
  | 'serp_keywords_domain'
  | 'backlinks_on_page'
  | 'v3_other'
  | 'appendix_status'
  | 'id_list'
  | 'tasks_fixed'
  | 'events_task_post';

/**
 * Which of the emulator's result builders answers (data/results.ts) and which price row
 * applies (prices.ts). A function's `task_post`, `live` and `task_get` share a kind.
 */
export type ResultKind =
  | 'serp'
  | 'tasks_ready'
  | 'tasks_fixed'
  | 'search_volume'
  | 'keywords_for_keywords'
  | 'keywords_for_site'
  | 'ad_traffic'
  | 'trends'
  | 'labs_ranked_keywords'
  | 'labs_related_keywords'
  | 'labs'
  | 'domain_analytics'
  | 'backlinks'
  | 'on_page_task'
  | 'on_page_pages'
  | 'on_page_links'
  | 'on_page_resources'
  | 'lighthouse'
  | 'content_analysis'
  | 'merchant'
  | 'app_data'
  | 'business_data'
  | 'reviews'
  | 'ai_keyword_volume'
  | 'llm_response'
  | 'chat_completion'
  | 'image_generation'
  | 'embeddings'
  | 'errors'
  | 'id_list'
  | 'user_data'
  | 'api_status'
  | 'endpoint_list'
  | 'locations'
  | 'languages'
  | 'lighthouse_versions'
  | 'available_filters'
  | 'llm_models'
  | 'webhook_resend'
  | 'generic';

/** One endpoint the emulator serves, as a row of its table (endpoints.ts). */
export interface Endpoint {
  /** The path after `/v3` (or the whole `/v1` path), `/` as `.`, `{id}` dropped: `serp.engA.organic.task_post`. */
  id: string;
  method: 'GET' | 'POST';
  /** Path template without a trailing slash; `{id}` is a task id, `{country_code}` a country. */
  path: string;
  /** `v1`, or the first segment after `/v3`. */
  api: string;
  family: FamilyId;
  mode: EndpointMode;
  format?: ResultFormat;
  /** Most tasks one POST may carry; past it a task is refused (40006 for `task_post`). */
  maxTasksPerPost?: number;
  /** Whether tasks created here take `pingback_url` / `postback_url`. */
  callbacks: boolean;
  /** Whether a call is charged at all (free calls are listed by the spec's Billing section). */
  charged: boolean;
  /** The request rules of one task (`/v3`) or of the body (`/v1`); undefined: the endpoint takes no body. */
  request?: RequestRules;
  /** Whether the `.ai` suffix applies (spec, AI-optimized variants). */
  ai: boolean;
  resultKind?: ResultKind;
}
