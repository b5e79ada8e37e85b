import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { byteBatches } from './byte-batches.js';
import { sqlList, sqlString } from './columns.js';
import { inflate, linesOf, longestLine, membersOf, removeInflated, scratchFile } from './inflate.js';
import { MAX_OBJECT_BYTES, OBJECT_TOO_LARGE, objectSizeFor, objectSizeOption } from './object-size.js';
import { ledgerWriter } from './ledger.js';
import { rawIndexWriter } from './raw/raw-index.js';
import type { Warehouse } from './warehouse.js';

/**
 * Rebuilds the raw index (`raw_responses`) for landed files it does not know, from the
 * files alone: each landed line carries its call metadata and shape. With it, the raw
 * folder on its own is enough to rebuild every typed table (`replay`), even when the
 * database was lost. The `ledger` rows of the calls in those files are rebuilt from the
 * same metadata (callbacks are not calls, so they get none): a response landed just before
 * a crash, or a free read whose rows were still deferred (see `RawLanding`), keeps its
 * ledger row. Responses already indexed are left as they are. Without `files`, every
 * landed file the index does not name is read.
 *
 * The files are read in name order, a few at a time ({@link BATCH_BYTES} of gzip, or one
 * larger file alone), each batch committing its index and ledger rows together: memory is
 * bounded by a batch whatever the night or the history holds, and a reindex stopped
 * half-way leaves whole files indexed, the rest for the next one. A body found in two files
 * (a small file and the segment a killed compaction wrote) counts once, under the first
 * file by name.
 */
export async function reindexRaw(wh: Warehouse, files?: readonly string[], o: { batchBytes?: number } = {}): Promise<number> {
  await wh.flushIndex();
  if (!files) {
    const indexed = new Set((await wh.all<{ f: string }>(`SELECT DISTINCT file AS f FROM raw_responses`)).map((r) => r.f));
    const all = await readdir(wh.rawDir, { recursive: true });
    files = all.filter((f) => f.endsWith('.ndjson.gz') && !indexed.has(join('raw', f))).map((f) => join(wh.rawDir, f));
  }
  if (files.length === 0) return 0;
  const sized = await Promise.all([...new Set(files)].sort().map(async (f) => ({ f, size: (await stat(f)).size })));
  const before = await count(wh);
  for (const batch of byteBatches(sized, o.batchBytes ?? BATCH_BYTES)) await indexBatch(wh, batch);
  return (await count(wh)) - before;
}

/** Gzip bytes of landed files read by one statement of a reindex. */
const BATCH_BYTES = 64 << 20;

/** Indexes one batch of files: their metadata (and task ids, from the bodies) read once, then both inserts in one transaction. */
async function indexBatch(wh: Warehouse, batch: readonly { f: string }[]): Promise<void> {
  const rel = (f: string) => (f.startsWith(`${wh.dir}/`) ? f.slice(wh.dir.length + 1) : f);
  // The bodies are read in the inner query and only the task ids leave it: the temp tables
  // hold metadata, never a body (holding the bodies there took DuckDB to 3.7 GiB on a night
  // of 10,000 SERPs).
  const files = sqlList(batch.map(({ f }) => f));
  const named = `replace(filename, ${sqlString(`${wh.dir}/`)}, '')`;
  // An answer larger than DuckDB reads by default: the batch is read again with the setting its longest line needs.
  let bytes: number | undefined;
  try {
    await wh.run(`CREATE OR REPLACE TEMP TABLE _reindexed_all AS ${indexRows(files, named)}`);
  } catch (err) {
    if (!OBJECT_TOO_LARGE.test((err as Error).message)) throw err;
    const longest = Math.max(...(await Promise.all(batch.map(({ f }) => longestLine(f)))));
    bytes = objectSizeFor(longest);
    if (bytes === undefined) throw new Error(`${(err as Error).message} (a line of ${longest} bytes, past the ${MAX_OBJECT_BYTES} bytes the load reads)`, { cause: err });
    await wh.run(`CREATE OR REPLACE TEMP TABLE _reindexed_all AS ${indexRows(files, named, bytes)}`);
  }
  try {
    // A file DuckDB read short as gzip (it has, without an error: 0e6f089) is read again from plain text.
    const short = await readShort(wh, batch.map(({ f }) => f), rel);
    if (short.length > 0) {
      const plain = short.map((f) => ({ f, scratch: scratchFile(wh.dir) }));
      try {
        for (const p of plain) await inflate([p.f], p.scratch);
        const file = `CASE filename ${plain.map((p) => `WHEN ${sqlString(p.scratch)} THEN ${sqlString(rel(p.f))}`).join(' ')} END`;
        await wh.run(`DELETE FROM _reindexed_all WHERE file IN (SELECT unnest(${sqlList(short.map(rel))}::VARCHAR[]))`);
        await wh.run(`INSERT INTO _reindexed_all ${indexRows(sqlList(plain.map((p) => p.scratch)), file, bytes)}`);
      } finally {
        await Promise.all(plain.map((p) => removeInflated(p.scratch)));
      }
    }
    await wh.run(`CREATE OR REPLACE TEMP TABLE _reindexed AS SELECT * FROM _reindexed_all QUALIFY row_number() OVER (PARTITION BY call_id ORDER BY file) = 1`);
  } finally {
    await wh.run(`DROP TABLE IF EXISTS _reindexed_all`);
  }
  try {
    await wh.transaction(async () => {
      // Earlier batches (and the index as it was) win: files are read in name order.
      await rawIndexWriter.from(wh, `(SELECT *, 0::BIGINT AS bytes, 0::BIGINT AS byte_offset FROM _reindexed)`);
      await ledgerWriter.reindexedCalls(wh, '_reindexed');
      await ledgerWriter.refundsFrom(wh, `(SELECT c.task_id, c.net_usd, received_at AS seen_at FROM (SELECT unnest(task_costs) AS c, received_at FROM _reindexed))`);
      // Refunds seen only in the balance are measured from the calls' rows: measured again.
      const runs = await wh.all<{ r: string }>(`SELECT DISTINCT run_id AS r FROM _reindexed WHERE run_id IS NOT NULL AND NOT callback`);
      await ledgerWriter.balanceRefunds(wh, runs.map((x) => x.r));
    });
  } finally {
    await wh.run(`DROP TABLE IF EXISTS _reindexed`);
  }
}

/** The index rows of the landed lines in `files` (a SQL list), each named by `file` (an expression of `filename`). */
function indexRows(files: string, file: string, objectBytes?: number): string {
  return `
    SELECT call_id, run_id, pipeline, endpoint_id, method, path, http_status, request_id,
           landed_file AS file, received_at::TIMESTAMPTZ AS received_at, kind, parsed, shape,
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
                 coalesce(callback, false) OR landed_file LIKE '%-cb-%' AS is_callback
    FROM (SELECT *, ${file} AS landed_file FROM read_json(${files}, columns = {
      call_id: 'VARCHAR', run_id: 'VARCHAR', pipeline: 'VARCHAR', endpoint_id: 'VARCHAR', method: 'VARCHAR', path: 'VARCHAR', http_status: 'INTEGER',
      request_id: 'VARCHAR', received_at: 'VARCHAR', kind: 'VARCHAR', parsed: 'BOOLEAN', shape: 'VARCHAR[]', charge_cny: 'VARCHAR', refund_cny: 'VARCHAR',
      cost_usd: 'VARCHAR', balance_cny: 'VARCHAR', tasks_sent: 'INTEGER', callback: 'BOOLEAN', callback_task: 'VARCHAR', body: 'JSON'
    }, format = 'newline_delimited', filename = true${objectSizeOption(objectBytes)})))`;
}

/**
 * The files of `files` of which `_reindexed_all` holds fewer lines than the file has: one per
 * gzip member (inflate.ts `membersOf`), or its newlines counted in Node for a file of
 * callbacks (several share a member) or whose members cannot be told apart. DuckDB stops
 * early at the end of a file, so a short read leaves either a callback line (counted then)
 * or fewer lines than members.
 */
async function readShort(wh: Warehouse, files: readonly string[], rel: (f: string) => string): Promise<string[]> {
  const read = new Map(
    (await wh.all<{ file: string; n: number; cb: boolean }>(`SELECT file, count(*)::INT AS n, bool_or(callback) AS cb FROM _reindexed_all GROUP BY file`)).map((r) => [r.file, r]),
  );
  const short: string[] = [];
  for (const f of files) {
    const r = read.get(rel(f));
    const expected = (r?.cb ? null : await membersOf(f)) ?? (await linesOf(f));
    if ((r?.n ?? 0) < expected) short.push(f);
  }
  return short;
}

async function count(wh: Warehouse): Promise<number> {
  const [r] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM raw_responses`);
  return r!.n;
}
