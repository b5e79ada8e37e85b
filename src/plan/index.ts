export * from './plan.js';
export * from './tag.js';
export * from './plan-summary.js';
export * from './price.js';
export * from './price-history.js';
export * from './embeddings.js';
export * from './readings-use.js';
export * from './pull-window.js';
