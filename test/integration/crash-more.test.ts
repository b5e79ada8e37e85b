import { killTest } from './crash-helpers.js';

// Ten kills of a second seed (crash.test.ts: the first).
killTest(7, 10);
