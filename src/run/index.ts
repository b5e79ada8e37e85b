export * from './run-pipeline.js';
export * from './summary.js';
