import { DATA_ENDPOINTS } from './data-endpoints.js';
import type { Endpoint } from './endpoint.js';
import { KEYWORDS_ENDPOINTS } from './keywords-endpoints.js';
import { AI_OPTIMIZATION_ENDPOINTS, ON_PAGE_ENDPOINTS, V1_ENDPOINTS } from './platform-endpoints.js';
import { SERP_ENDPOINTS } from './serp-endpoints.js';
import { UTILITY_ENDPOINTS } from './utility-endpoints.js';

export type { BodyKind, Endpoint, EndpointMode, ResultFormat, ResultKind } from './endpoint.js';
export { SERP_ORGANIC_ENGINES, SERP_PAIRS, UTILITY_APIS, type SerpEngine } from './serp-pairs.js';

/** Every endpoint the tool knows, in one list (ids are unique; the catalog test checks it). */
export const ENDPOINTS: readonly Endpoint[] = [
  ...SERP_ENDPOINTS,
  ...KEYWORDS_ENDPOINTS,
  ...DATA_ENDPOINTS,
  ...AI_OPTIMIZATION_ENDPOINTS,
  ...ON_PAGE_ENDPOINTS,
  ...UTILITY_ENDPOINTS,
  ...V1_ENDPOINTS,
];
