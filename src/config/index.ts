/**
 * The `config` stage: pipeline YAML in, a validated `Pipeline` with defaults filled out.
 * Every problem of a file is reported at once, with file, line and field.
 */
export { loadPipeline, type LoadPipelineOptions, type LoadedPipeline } from './load.js';
export { parsePipeline } from './parse.js';
export { pipelineJsonSchema, pipelineJsonSchemaText } from './json-schema.js';
export {
  pipelineSchema,
  jobSchema,
  type Pipeline,
  type PipelineInput,
  type Job,
  type JobOf,
  type SerpJob,
  type SearchVolumeJob,
} from './schema.js';
export type { Env } from './env.js';
export {
  collectionSchema,
  resolveCollection,
  DEFAULT_COLLECTION,
  type Collection,
  type CollectionInput,
  type CollectionOverrides,
  type ResolvedCollection,
} from './collection.js';
export { lakeUrlSchema, resolveLake, LAKE_ENV } from './lake.js';
export {
  alertsSchema,
  alertsIssues,
  ALERT_RULE_NAMES,
  ALERT_RULE_SHAPE,
  type AlertRuleName,
  type AlertRules,
  type AlertsConfig,
} from './alerts-block.js';
export { CronClock, floorMinute } from './cron-clock.js';
export { locate, keyText, fieldPath, positionsIn, type DataPath, type Position } from './positions.js';
