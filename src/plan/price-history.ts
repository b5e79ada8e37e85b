import { TASK_UNITS_SQL } from '../catalog/index.js';
import type { Warehouse } from '../warehouse/index.js';
import type { PriceHistory } from './price.js';

/**
 * Reads past prices from the ledger: CNY per unit (catalog `taskUnits`: a SERP task's depth
 * counts) of each charged POST (task creation and live calls), by pipeline and endpoint, and
 * the CNY/USD ratio of charged calls. A call's units are those of the tasks it posted
 * (`tasks.post_call_id`); a call whose tasks are not known counts one unit a task.
 */
export async function readPriceHistory(wh: Warehouse): Promise<PriceHistory> {
  const rows = await wh.all<{ pipeline: string; endpoint_id: string; per_task: number }>(
    `WITH units AS (SELECT post_call_id AS call_id, sum(${TASK_UNITS_SQL})::DOUBLE AS u FROM tasks WHERE post_call_id IS NOT NULL GROUP BY 1)
     SELECT l.pipeline, l.endpoint_id, (sum(l.charge_cny) / sum(coalesce(units.u, l.tasks)))::DOUBLE AS per_task
     FROM ledger AS l LEFT JOIN units USING (call_id)
     WHERE l.tasks > 0 AND l.charge_cny > 0 AND l.http_status BETWEEN 200 AND 299
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
