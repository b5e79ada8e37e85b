import { priceTasks, readPriceHistory, type Plan } from '../plan/index.js';
import type { Warehouse } from '../warehouse/index.js';

/**
 * What the plan should cost, in CNY, priced as `pipeline plan` prices it from the ledger of
 * earlier runs (read before this run spends anything); null when any endpoint of the plan has
 * never been bought, so a first run is never said to have exceeded a guess.
 */
export async function planEstimateCny(wh: Warehouse, plan: Plan): Promise<number | null> {
  const prices = priceTasks(plan, await readPriceHistory(wh), undefined, () => false);
  const per = new Map(prices.map((p) => [p.endpointId, p.cnyPerTask]));
  let total = 0;
  for (const t of plan.tasks) {
    const p = per.get(t.endpoint.id);
    if (p === null || p === undefined) return null;
    total += p;
  }
  return total;
}
