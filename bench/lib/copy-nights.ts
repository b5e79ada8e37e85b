import { Warehouse } from '../../src/warehouse/index.js';

// A year's history from one real night, in SQL: bench/night.ts (the 366th night) and bench/startup.ts
// (status and ledger on a year's warehouse) build their histories with it.

const SUFFIXED = new Set(['task_id', 'call_id', 'run_id', 'tag', 'request_id']);

/**
 * Copies the rows of the first night (run `runId`) to nights 1 .. nights-1 after it: data dates (DATE columns) a day
 * later per copy, call and run times (timestamps) likewise, ids suffixed. Tables: the state tables and the SERP tables,
 * the rows of that run only (by run_id, or by task for tables keyed by task).
 */
export async function copyNights(dir: string, runId: string, nights: number): Promise<void> {
  const wh = await Warehouse.open(dir);
  try {
    const tables = ['runs', 'tasks', 'run_jobs', 'ledger', 'raw_responses', 'raw_heads', 'serp_results', 'serp_items'];
    const present = new Set((await wh.all<{ t: string }>(`SELECT table_name AS t FROM duckdb_tables()`)).map((r) => r.t));
    // The night's tasks, for the tables without a run_id (serp_items), taken before any row is moved.
    await wh.run(`CREATE OR REPLACE TEMP TABLE _night_tasks AS SELECT DISTINCT task_id FROM serp_results WHERE run_id = '${runId}'`);
    for (const t of tables.filter((x) => present.has(x))) {
      const cols = await wh.all<{ name: string; type: string }>(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
        [t],
      );
      const names = new Set(cols.map((c) => c.name));
      const shifted = (shift: string) =>
        cols
          .map((c) => {
            const id = `"${c.name}"`;
            if (c.type === 'DATE') return `${id} + (i)::INTEGER AS ${id}`;
            if (c.type.startsWith('TIMESTAMP')) return `${id} + to_days((${shift})::INTEGER) AS ${id}`;
            if (SUFFIXED.has(c.name) && c.type === 'VARCHAR') return `${id} || '-h' || i AS ${id}`;
            if (c.name === 'task_ids') return `list_transform(${id}, x -> x || '-h' || i) AS ${id}`;
            return id;
          })
          .join(', ');
      const mine = names.has('run_id') ? `run_id = '${runId}'` : `task_id IN (SELECT task_id FROM _night_tasks)`;
      await wh.run(`CREATE OR REPLACE TEMP TABLE _night AS SELECT * FROM "${t}" WHERE ${mine}`);
      // A month of copies a statement, in date order (zone maps stay tight, as nightly loads leave them).
      for (let from = 0; from < nights; from += 30) {
        const to = Math.min(nights, from + 30);
        await wh.run(`INSERT INTO "${t}" SELECT ${shifted(`i - ${nights}`)} FROM range(${from}, ${to}) r(i), _night ORDER BY i`);
      }
      await wh.run(`DELETE FROM "${t}" WHERE ${mine}`);
    }
    await wh.run('CHECKPOINT');
  } finally {
    wh.close();
  }
}
