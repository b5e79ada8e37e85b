/**
 * Rate-limit families, straight from the Limits table of the service interface.
 * A family is the unit the client's limiter counts calls against.
 */
export interface Family {
  id: FamilyId;
  /** Calls allowed in any sliding minute. */
  perMinute: number;
  description: string;
}

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

export const FAMILIES: Readonly<Record<FamilyId, Family>> = {
  chat: { id: 'chat', perMinute: 60, description: 'Chat completions (text and image generation)' },
  v1_other: { id: 'v1_other', perMinute: 120, description: 'Other /v1 (embeddings)' },
  serp_keywords_domain: {
    id: 'serp_keywords_domain',
    perMinute: 60,
    description: 'SERP, keyword and domain-analysis endpoints',
  },
  backlinks_on_page: { id: 'backlinks_on_page', perMinute: 30, description: 'Backlinks, on-page' },
  v3_other: { id: 'v3_other', perMinute: 120, description: 'Other /v3' },
  appendix_status: { id: 'appendix_status', perMinute: 10, description: 'appendix/status' },
  id_list: { id: 'id_list', perMinute: 10, description: '{api}/id_list (1000 ids a call)' },
  tasks_fixed: { id: 'tasks_fixed', perMinute: 20, description: 'tasks_fixed (1000 tasks a call)' },
  events_task_post: {
    id: 'events_task_post',
    perMinute: 2000,
    description: 'Events task_post (100 tasks a POST)',
  },
};
