import type { Warehouse } from '../warehouse/index.js';
import type { PriceHistory } from './price.js';

/**
 * Reads past prices from the ledger: CNY per task of each charged POST (task creation and
 * live calls), by pipeline and endpoint, and the CNY/USD ratio of charged calls.
 */
export async function readPriceHistory(wh: Warehouse): Promise<PriceHistory> {
  const rows = await wh.all<{ pipeline: string; endpoint_id: string; per_task: number }>(
    `SELECT pipeline, endpoint_id, (sum(charge_cny) / sum(tasks))::DOUBLE AS per_task
     FROM ledger WHERE tasks > 0 AND charge_cny > 0 AND http_status BETWEEN 200 AND 299
     GROUP BY ALL`,
  );
  const byPipeline = new Map<string, number>();
  const sums = new Map<string, { cny: number; n: number }>();
  for (const r of rows) {
    byPipeline.set(`${r.pipeline}\0${r.endpoint_id}`, r.per_task);
    const s = sums.get(r.endpoint_id) ?? { cny: 0, n: 0 };
    sums.set(r.endpoint_id, { cny: s.cny + r.per_task, n: s.n + 1 });
  }
  const [ratio] = await wh.all<{ r: number | null }>(
    `SELECT (sum(charge_cny) / nullif(sum(cost_usd), 0))::DOUBLE AS r FROM ledger WHERE charge_cny > 0 AND cost_usd > 0`,
  );
  return {
    byPipeline,
    byEndpoint: new Map([...sums].map(([k, s]) => [k, s.cny / s.n])),
    cnyPerUsd: ratio?.r ?? null,
  };
}
