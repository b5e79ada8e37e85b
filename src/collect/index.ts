export * from './pull.js';
export * from './on-page.js';
export * from './refetch-fixed.js';
