export * from './manifest-tables.js';
export * from './mark-loaded.js';
export * from './partitioning.js';
export * from './publish.js';
export * from './serving-catalog.js';
export { publishedTables, recordPublishedModels, type PublishedModel } from './published-tables.js';
export * from './read-serving.js';
