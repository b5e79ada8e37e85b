import { killTest } from './crash-helpers.js';

// Ten kills of one seed (crash-more.test.ts: ten of another).
killTest(20261122, 10);
