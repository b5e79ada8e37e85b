export type { PostContext, PostStop } from './context.js';
export { postAll, stopFor, failedOutcome, type BatchOutcome, type FailedPost } from './post-step.js';
export { settleLive } from './live-calls.js';
export { resolveUnknown } from './resolve-unknown.js';
export { lostChargesNote } from './lost-charges-note.js';
export { fromMicros, toMicros } from './money.js';
