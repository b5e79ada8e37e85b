export * from './pull.js';
export * from './refetch-fixed.js';
