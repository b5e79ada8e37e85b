import { moneyTests } from './readings-helpers.js';

/**
 * The cheapest money test under each other switchable reading of the emulator that touches what a
 * night buys or how it collects (src/sandbox/readings.ts), one at a time: production's one task per
 * asynchronous POST, further depth blocks at the base price or free, the service's clock ahead of
 * or behind ours, a ready list read a page at a time.
 */
moneyTests([
  { asyncTasksPerPost: 1 },
  { extraDepthPrice: 1 },
  { extraDepthPrice: 0 },
  { clockSkew: 120 },
  { clockSkew: -120 },
  { readyListPaging: 1 },
]);
