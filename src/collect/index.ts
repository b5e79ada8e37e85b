export * from './pull.js';
