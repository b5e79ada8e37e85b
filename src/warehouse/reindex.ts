import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ledgerWriter } from './ledger.js';
import type { Warehouse } from './warehouse.js';

/**
 * Rebuilds the raw index (`raw_responses`) for landed files it does not know, from the
 * files alone: each landed line carries its call metadata and shape. With it, the raw
 * folder on its own is enough to rebuild every typed table (`replay`), even when the
 * database was lost. The `ledger` rows of the calls in those files are rebuilt from the
 * same metadata (callbacks are not calls, so they get none), and the refund rows of the
 * results they carry (ledger.ts): a response landed just before
 * a crash, or a free read whose rows were still deferred (see `RawLanding`), keeps its
 * ledger row. Responses already indexed are left as they are. Without `files`, every
 * landed file the index does not name is read.
 */
export async function reindexRaw(wh: Warehouse, files?: readonly string[]): Promise<number> {
  await wh.flushIndex();
  if (!files) {
    const indexed = new Set((await wh.all<{ f: string }>(`SELECT DISTINCT file AS f FROM raw_responses`)).map((r) => r.f));
    const all = await readdir(wh.rawDir, { recursive: true });
    files = all.filter((f) => f.endsWith('.ndjson.gz') && !indexed.has(join('raw', f))).map((f) => join(wh.rawDir, f));
  }
  if (files.length === 0) return 0;
  const list = `[${files.map((f) => `'${f.replaceAll("'", "''")}'`).join(',')}]`;
  const before = await count(wh);
  // One read of the files: their metadata (and the task ids, from the body) into a temp table, then both inserts.
  await wh.run(`
    CREATE OR REPLACE TEMP TABLE _reindexed AS
    SELECT call_id, run_id, pipeline, endpoint_id, method, path, http_status, request_id,
           replace(filename, '${wh.dir.replaceAll("'", "''")}/', '') AS file, received_at::TIMESTAMPTZ AS received_at, kind, parsed, shape,
           CASE WHEN NOT parsed THEN []
                -- A callback is accepted for one task (the one its URL named): only that id, never
                -- another the body holds. An older callback line without the id counts only if its
                -- body holds one task.
                WHEN callback_task IS NOT NULL THEN list_filter(ok_ids, x -> x = callback_task)
                WHEN is_callback AND coalesce(json_array_length(body -> 'tasks'), 0) <> 1 THEN []
                ELSE ok_ids END AS task_ids,
           -- The cost each of those tasks came with (refunds are measured by it: ledger.ts).
           CASE WHEN parsed THEN [{'task_id': t.id, 'net_usd': t.cost} FOR t IN coalesce(from_json(body -> 'tasks', '[{"id":"VARCHAR","status_code":"BIGINT","cost":"DECIMAL(18,6)","result":"JSON"}]'), []) IF t.status_code = 20000 AND t.result IS NOT NULL AND t.result::VARCHAR <> 'null' AND t.cost IS NOT NULL AND (callback_task IS NULL OR t.id = callback_task)] ELSE [] END AS task_costs,
           charge_cny, refund_cny, cost_usd, balance_cny, tasks_sent,
           -- Callback lines say so; older ones are known by their file name. Callbacks are not our calls: no ledger row.
           is_callback AS callback
    FROM (SELECT *,
                 CASE WHEN parsed THEN [t.id FOR t IN coalesce(from_json(body -> 'tasks', '[{"id":"VARCHAR","status_code":"BIGINT","result":"JSON"}]'), []) IF t.status_code = 20000 AND t.result IS NOT NULL AND t.result::VARCHAR <> 'null'] ELSE [] END AS ok_ids,
                 coalesce(callback, false) OR filename LIKE '%-cb-%' AS is_callback
    FROM read_json(${list}, columns = {
      call_id: 'VARCHAR', run_id: 'VARCHAR', pipeline: 'VARCHAR', endpoint_id: 'VARCHAR', method: 'VARCHAR', path: 'VARCHAR', http_status: 'INTEGER',
      request_id: 'VARCHAR', received_at: 'VARCHAR', kind: 'VARCHAR', parsed: 'BOOLEAN', shape: 'VARCHAR[]', charge_cny: 'VARCHAR', refund_cny: 'VARCHAR',
      cost_usd: 'VARCHAR', balance_cny: 'VARCHAR', tasks_sent: 'INTEGER', callback: 'BOOLEAN', callback_task: 'VARCHAR', body: 'JSON'
    }, format = 'newline_delimited', filename = true))
    -- A body in two files (a small file and the segment a killed compaction wrote) counts once.
    QUALIFY row_number() OVER (PARTITION BY call_id ORDER BY filename) = 1`);
  try {
    await wh.transaction(async () => {
      await wh.run(`
        INSERT INTO raw_responses BY NAME
        SELECT call_id, run_id, endpoint_id, path, http_status, request_id, file, 0 AS bytes, received_at, kind, parsed, task_ids, shape, 0 AS byte_offset
        FROM _reindexed WHERE call_id NOT IN (SELECT call_id FROM raw_responses)`);
      await ledgerWriter.reindexedCalls(wh, '_reindexed');
      await ledgerWriter.refundsFrom(wh, `(SELECT c.task_id, c.net_usd, received_at AS seen_at FROM (SELECT unnest(task_costs) AS c, received_at FROM _reindexed))`);
    });
  } finally {
    await wh.run(`DROP TABLE IF EXISTS _reindexed`);
  }
  return (await count(wh)) - before;
}

async function count(wh: Warehouse): Promise<number> {
  const [r] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM raw_responses`);
  return r!.n;
}
