import { crashTests } from './readings-helpers.js';

/** The cheapest crash test (a lost POST found by tag) where the service's clock is ahead of or behind ours, and one task a POST. */
crashTests([{ clockSkew: 120 }, { clockSkew: -120 }, { asyncTasksPerPost: 1 }]);
