import {
  EVENTS_TASK_UNITS,
  extraBlocks,
  HIGH_PRIORITY_FACTOR,
  LIVE_FACTOR_TENTHS,
  SERP_BASE_UNITS,
  SERP_EXTRA_BLOCK_UNITS,
  type Endpoint,
} from './spec/index.js';
import { dataTaskPriceUnits } from './data/results.js';
import { READINGS } from './readings.js';

/**
 * Prices of one task, from the price table of spec/prices.ts (CNY units of 0.0001, money.ts).
 */

/** Base price of one standard-mode SERP task, normal priority, depth up to 10 (spec/prices.ts). */
export const BASE_TASK_UNITS = SERP_BASE_UNITS;
/** Each further started block of 10 results under the default reading (spec/prices.ts; READINGS.extraDepthPrice). */
export const EXTRA_BLOCK_UNITS = SERP_EXTRA_BLOCK_UNITS;

/** A further block of 10 results at `fraction` of the base price (readings.ts `extraDepthPrice`: 0.75, 1 or 0). */
export function extraBlockUnits(fraction: number): number {
  return Math.round(BASE_TASK_UNITS * fraction);
}
export { EVENTS_TASK_UNITS, LIVE_FACTOR_TENTHS };

/** The part of a task that moves its price. */
export interface PricedTask {
  depth?: number;
  priority?: number;
}

/**
 * Price of one SERP task in CNY units. `depth` defaults to 10 as the service does; each further
 * block of 10 costs `extraFraction` of the base (the served `extraDepthPrice` reading); live
 * prices are rounded half up to 0.0001 CNY.
 */
export function serpTaskPriceUnits(
  task: PricedTask,
  mode: 'standard' | 'live',
  extraFraction: number = READINGS.extraDepthPrice.value,
): number {
  let units = BASE_TASK_UNITS + extraBlocks(task.depth) * extraBlockUnits(extraFraction);
  if (task.priority === 2) units *= HIGH_PRIORITY_FACTOR;
  if (mode === 'live') units = Math.floor((units * LIVE_FACTOR_TENTHS + 5) / 10);
  return units;
}

/**
 * Price of one task of any endpoint in CNY units: SERP by depth and priority (events at
 * their own base), other families by result kind (data/results.ts).
 */
export function taskPriceUnits(
  endpoint: Endpoint,
  task: Record<string, unknown>,
  mode: 'standard' | 'live',
  extraFraction: number = READINGS.extraDepthPrice.value,
): number {
  if (endpoint.api !== 'serp') return dataTaskPriceUnits(endpoint, task, mode);
  const units = serpTaskPriceUnits(task as PricedTask, mode, extraFraction);
  if (!endpoint.path.includes('/events/')) return units;
  return Math.round((units * EVENTS_TASK_UNITS) / BASE_TASK_UNITS);
}
