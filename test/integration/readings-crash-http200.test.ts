import { crashTests, READING_COMBOS } from './readings-helpers.js';

// The crash test under the refusals HTTP 200 with tasks at 40202 (readings-crash.test.ts: HTTP 429).
crashTests(READING_COMBOS.filter((r) => r.rateLimitBody === 'http200'));
