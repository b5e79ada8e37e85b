import { taskUnitsByCallSql, type Warehouse } from '../warehouse/index.js';
import type { PriceHistory } from './price.js';

/**
 * Reads past prices from the ledger: CNY per unit (catalog `taskUnits`: a SERP task's depth
 * counts) of the charged POSTs (task creation and live calls) of the last 90 days of charges,
 * by pipeline and endpoint, and
 * the CNY/USD ratio of charged calls. A call's units are those of the tasks it posted
 * (`tasks.post_call_id`); a call whose tasks are not known counts one unit a task.
 */
export async function readPriceHistory(wh: Warehouse): Promise<PriceHistory> {
  const rows = await wh.all<{ pipeline: string; endpoint_id: string; per_task: number }>(
    // The charged calls of the 90 days up to the newest (prices change; a year of task specs is
    // not parsed at each run's start), and the units of the tasks they posted.
    `WITH charged AS (
       SELECT call_id, pipeline, endpoint_id, charge_cny, tasks FROM ledger
       WHERE tasks > 0 AND charge_cny > 0 AND http_status BETWEEN 200 AND 299
         AND called_at >= (SELECT max(called_at) FROM ledger WHERE tasks > 0 AND charge_cny > 0) - INTERVAL 90 DAY),
     units AS (${taskUnitsByCallSql('SELECT call_id FROM charged')})
     SELECT c.pipeline, c.endpoint_id, (sum(c.charge_cny) / sum(coalesce(units.u, c.tasks)))::DOUBLE AS per_task
     FROM charged AS c LEFT JOIN units USING (call_id)
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
