import { moneyTests, READING_COMBOS } from './readings-helpers.js';

/** The cheapest money test under every combination of the refund and rate-limit readings (readings-helpers.ts). */
moneyTests(READING_COMBOS);
