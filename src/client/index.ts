export * from './charge.js';
export * from './client.js';
export * from './envelope.js';
export * from './rate-limiter.js';
export * from './redact.js';
export * from './success.js';
export * from './validate.js';
