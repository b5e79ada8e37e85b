import { extraDepthBlocks, SERP_EXTRA_PAGE_FRACTION, type Endpoint } from '../catalog/index.js';
import { dataTaskPriceUnits } from './data/results.js';

/**
 * Simulated price list of the SERP organic slice, in CNY units of 0.0001 (see money.ts).
 * The spec names the shape of the price (a base that covers the first page, an extra per
 * further block of 10, more for priority 2, more for live) but not the numbers; these are
 * the emulator's, chosen so that plans can be priced and reconciled in tests.
 */

/** Base price of one standard-mode task, normal priority, depth up to 10: 0.0043 CNY. */
export const BASE_TASK_UNITS = 43;
/** Each further started block of 10 results: 0.0032 CNY (the catalog's 75% of the base, rounded). */
export const EXTRA_BLOCK_UNITS = Math.round(BASE_TASK_UNITS * SERP_EXTRA_PAGE_FRACTION);
/** Live mode costs 3.3 times standard mode (kept as 33/10 to stay integral). */
export const LIVE_FACTOR_TENTHS = 33;

/** The part of a task that moves its price. */
export interface PricedTask {
  depth?: number;
  priority?: number;
}

/**
 * Price of one SERP task in CNY units. `depth` defaults to 10 as the service does; live
 * prices are rounded half up to 0.0001 CNY.
 */
export function serpTaskPriceUnits(task: PricedTask, mode: 'standard' | 'live'): number {
  const extraBlocks = extraDepthBlocks(task.depth);
  let units = BASE_TASK_UNITS + extraBlocks * EXTRA_BLOCK_UNITS;
  if (task.priority === 2) units *= 2;
  if (mode === 'live') units = Math.floor((units * LIVE_FACTOR_TENTHS + 5) / 10);
  return units;
}

/** Events `task_post`: about 0.0240 CNY per task (spec, Billing). */
export const EVENTS_TASK_UNITS = 240;

/**
 * Price of one task of any endpoint in CNY units: SERP by depth and priority (events at
 * their own base), other families by result kind (data/results.ts).
 */
export function taskPriceUnits(endpoint: Endpoint, task: Record<string, unknown>, mode: 'standard' | 'live'): number {
  if (endpoint.api !== 'serp') return dataTaskPriceUnits(endpoint, task, mode);
  const units = serpTaskPriceUnits(task as PricedTask, mode);
  if (!endpoint.path.includes('/events/')) return units;
  return Math.round((units * EVENTS_TASK_UNITS) / BASE_TASK_UNITS);
}
