/**
 * The service client: the one way the tool talks to the service.
 * - `client.ts`: {@link ServiceClient} — `call` (/v3 tasks), `callV1` (/v1 bodies); its options
 *   and results in `client-types.ts`;
 * - `retry-policy.ts`: the retry policy as data (methods, statuses, error codes, backoff,
 *   attempts) and the one function that reads it; `exchange.ts` sends a call by it;
 * - `answers.ts`, `v3-answer.ts`: rate-limit refusals in a 200, answers matched to the tasks
 *   sent, and an answer's success or error;
 * - `attempt.ts`: one HTTP exchange (Bearer, Content-Type, `X-Svc-Request-ID`, landing);
 * - `validate.ts`: bodies checked against the catalog before anything is sent;
 * - `rate-limiter.ts` / `sliding-window.ts`: one never-over sliding window per family;
 * - `success.ts`, `envelope.ts`, `charge.ts`: the success rule, per-task outcomes, charges;
 * - `failures.ts`, `redact.ts`: clear errors (outcome unknown with tags), keys removed;
 * - `v1-calls.ts`: chat, embeddings (Float32Array), image generation;
 * - `explore.ts`: one call by method and path, for `pipeline api`.
 */
export * from './attempt.js';
export * from './charge.js';
export * from './client.js';
export * from './envelope.js';
export * from './explore.js';
export * from './failures.js';
export * from './rate-limiter.js';
export * from '../redact.js';
export * from './task-id.js';
export * from './sliding-window.js';
export * from './success.js';
export * from './v1-calls.js';
export * from './validate.js';
