/**
 * The `jobs` stage: one module per job kind (its schema on shared base fields, its
 * expansion into task bodies, how it is collected when special) and one registry that
 * builds the config's union and the planner's dispatch. Imports only the catalog, so both
 * `config` and `plan` may read it without a cycle.
 */
export {
  JOB_KINDS,
  jobSchema,
  jobKindOf,
  expandJob,
  crawlReadsOf,
  embeddingJobs,
  CRAWL_POST_ENDPOINTS,
  type AnyJob,
  type JobKindName,
} from './registry.js';
export {
  defineJobKind,
  type JobKind,
  type Named,
  type CrawlReads,
  type CrawlCollection,
  type FieldPath,
  type PreflightIssue,
  type PreflightResult,
  type ReadReference,
  type EmbedSpec,
} from './job-kind.js';
export { normalizeKeyword, placeFields, functionEndpoint, type Spec, type JobSpecs } from './expand.js';
export { fillTemplate, JOB_ENDPOINTS, PLACEHOLDERS } from './endpoint-template.js';
export * from './base-fields.js';
export * from './place-fields.js';
export * from './keyword-fields.js';
export { serpJobSchema, OS_BY_DEVICE, SERP_TYPES, type SerpJobInput } from './kinds/serp.js';
export { searchVolumeJobSchema, type SearchVolumeJobInput } from './kinds/search-volume.js';
export { LABS_FUNCTIONS } from './kinds/labs.js';
export { TRENDS_FUNCTIONS } from './kinds/trends.js';
export { ON_PAGE_READS } from './kinds/on-page.js';
export { embeddingDimensions } from './kinds/embeddings.js';
export { AUTO_DEPTH_DEFAULTS, autoDepthOf, AUTO_TRACKED_MAX, type AutoDepth } from './kinds/serp-depth.js';
