import { exportParquet, type Warehouse } from '../warehouse/index.js';

/** Tables every run writes (state, jobs, ledger, raw index, tracked domains). */
const STATE_TABLES = ['runs', 'tasks', 'run_jobs', 'ledger', 'raw_responses', 'tracked_domains'];

/**
 * Publishes what the run wrote for readers: Parquet copies of the tables it touched (`pipeline
 * export` rewrites all). The last step of a run, after the models.
 */
export async function publishStep(wh: Warehouse, touched: ReadonlySet<string>): Promise<{ tables: number }> {
  const written = await exportParquet(wh, { tables: [...STATE_TABLES, ...touched] });
  return { tables: written.length };
}
