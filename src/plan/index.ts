export * from './plan.js';
export * from './tag.js';
