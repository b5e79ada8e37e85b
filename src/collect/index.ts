export * from './pull.js';
export * from './on-page.js';
