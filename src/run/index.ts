// The door of the run. `pipeline status` reads a live run's file through it and the scheduler its
// constants, and must not load every stage a run drives: the light modules (the live file, the
// progress line, exit codes, the resume window and every type) are re-exported as they are; a run,
// a preflight, the clustering and the publish step load their modules when called.
import type * as ClusterRun from './cluster-run.js';
import type * as Preflight from './preflight.js';
import type * as PublishStep from './publish-step.js';
import type * as RunPipeline from './run-pipeline.js';

export { runExitCode } from './exit-code.js';
export { readLiveRun, type LiveRun } from './live-status.js';
export { progressLine } from './progress.js';
export { RESUME_WITHIN_MS, type ProgressEvent, type RunOptions } from './run-options.js';
export type { RunOutcome } from './run-pipeline.js';
export type { RunSummary } from './summary.js';
export type { ReferenceCache } from './preflight.js';

export const runPipeline: typeof RunPipeline.runPipeline = async (o) => (await import('./run-pipeline.js')).runPipeline(o);
export const runScheduledNight: typeof RunPipeline.runScheduledNight = async (o) =>
  (await import('./run-pipeline.js')).runScheduledNight(o);
export const preflightJobs: typeof Preflight.preflightJobs = async (client, pipeline, file, cache) =>
  (await import('./preflight.js')).preflightJobs(client, pipeline, file, cache);
export const runClusters: typeof ClusterRun.runClusters = async (o) => (await import('./cluster-run.js')).runClusters(o);
export const publishStep: typeof PublishStep.publishStep = async (wh, now) => (await import('./publish-step.js')).publishStep(wh, now);
