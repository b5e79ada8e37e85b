export * from './exit-code.js';
export * from './run-pipeline.js';
export * from './summary.js';
export { RESUME_WITHIN_MS } from './ingest-step.js';
export { readLiveRun, type LiveRun } from './live-status.js';
export { progressLine } from './progress.js';
export { preflightJobs, type ReferenceCache } from './preflight.js';
export { runClusters } from './cluster-run.js';
export { publishStep } from './publish-step.js';
