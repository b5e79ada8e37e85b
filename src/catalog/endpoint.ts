import type { z } from 'zod';
import type { FamilyId } from './families.js';
import type { TimedIssue } from './schemas/utility-tasks.js';

/** What a call of this endpoint does in the task lifecycle. */
export type EndpointMode = 'live' | 'task_post' | 'tasks_ready' | 'task_get' | 'utility';
export type ResultFormat = 'regular' | 'advanced' | 'html';

/** How a request body is shaped: a JSON array of tasks (`/v3`), one JSON object (`/v1`), none (GET). */
export type BodyKind = 'tasks' | 'object' | 'none';

/**
 * Which normalizer of the warehouse reads the results. A function's `task_post`, `live`
 * and `task_get` share a kind (a postback carries the same result as `task_get`);
 * `generic` means no declared table, flattened by the generic path.
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

/**
 * One endpoint of the service, as data. The client, the planner, the emulator and the
 * loader all read this; adding an endpoint is adding an entry.
 */
export interface Endpoint {
  /** Stable id derived from the path (scheme in `index.ts`), e.g. `serp.engA.organic.task_post`. */
  id: string;
  method: 'GET' | 'POST';
  /** Path template without a trailing slash; `{id}` stands for a task id. */
  path: string;
  /** `v1`, or the first segment after `/v3` (`serp`, `keywords_data`, `appendix`, ...). */
  api: string;
  family: FamilyId;
  mode: EndpointMode;
  format?: ResultFormat;
  body: BodyKind;
  /** Most tasks one POST may carry (extra tasks fail with 40006). */
  maxTasksPerPost?: number;
  /** Most `keywords` one task may carry (700 search volume, 1000 AI volume, 5 trends); the planner packs by it. */
  maxKeywordsPerTask?: number;
  /** Whether tasks created here can carry pingback/postback URLs (else `webhook_resend` gives 40503). */
  callbacks: boolean;
  /** Whether the service may charge for a call; unknowns are taken as charged so they are never re-sent blindly. */
  charged: boolean;
  /** Schema of one task of the POST body (`/v3`), or of the whole body (`/v1`). */
  request?: z.ZodType;
  /** Rules that depend on the clock (look-back windows), checked with an injected `now`. */
  timeRules?: (task: Record<string, unknown>, now: Date) => TimedIssue[];
  /** Whether the `.ai` suffix (AI-optimized response, no extra charge) applies. */
  ai: boolean;
  /** Which normalizer of the warehouse reads the result. */
  resultKind?: ResultKind;
  /** Set where the spec leaves the entry's shape open and the catalog chose; says what was chosen. */
  inferred?: string;
}
