export * from './exit-code.js';
export * from './run-pipeline.js';
export * from './summary.js';
