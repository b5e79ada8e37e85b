/**
 * The service client: the one way the tool talks to the service.
 * - `client.ts`: {@link ServiceClient} — `call` (/v3 tasks), `callV1` (/v1 bodies), retries;
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
