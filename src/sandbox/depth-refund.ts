import type { Endpoint } from '../catalog/index.js';
import { taskPriceUnits } from './pricing.js';

/**
 * CNY units to give back when a SERP task returned fewer organic results than its
 * `depth`: the price at the asked depth minus the price at the depth served (spec:
 * "if fewer results are returned than depth, the difference is refunded").
 */
export function unusedDepthUnits(endpoint: Endpoint, params: Record<string, unknown>, mode: 'standard' | 'live', results: unknown[]): number {
  if (endpoint.api !== 'serp' || !endpoint.charged) return 0;
  const depth = typeof params.depth === 'number' ? params.depth : 10;
  const first = results[0] as { items?: Array<{ type?: string }> } | undefined;
  if (!first?.items) return 0;
  const served = first.items.filter((i) => i.type === 'organic').length;
  if (served >= depth) return 0;
  return Math.max(0, taskPriceUnits(endpoint, params, mode) - taskPriceUnits(endpoint, { ...params, depth: Math.max(1, served) }, mode));
}
