export type { PostContext, PostStop } from './context.js';
export { postAll, stopFor, failedOutcome, type BatchOutcome, type FailedPost } from './post-step.js';
export { settleLive } from './live-calls.js';
export { resolveUnknown, lostChargesNote } from './resolve-unknown.js';
export { fromMicros, toMicros } from './money.js';
