export * from './pull.js';
export * from './on-page.js';
export * from './refetch-fixed.js';
export * from './load-tasks.js';
export * from './push-collect.js';
export { CallbackServer, type CallbackServerOptions, type CallbackCounts } from './push.js';
export type { LandedCallback } from './land-callback.js';
export { PostedTasks, type PostedTask } from './posted-tasks.js';
export { TaskLoader, type TaskLoaderOptions, type LoaderTotals } from './task-loader.js';
