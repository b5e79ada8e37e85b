import { crashTests, READING_COMBOS } from './readings-helpers.js';

// The crash test under the refusals HTTP 429 (readings-crash-http200.test.ts: HTTP 200).
crashTests(READING_COMBOS.filter((r) => r.rateLimitBody === 'http429'));
