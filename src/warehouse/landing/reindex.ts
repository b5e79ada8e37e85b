import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ENDPOINTS, taskFunctionOf } from '../../catalog/index.js';
import { byteBatches } from '../normalize/byte-batches.js';
import { sqlList, sqlString } from '../columns.js';
import { inflate, linesOf, longestLine, membersOf, removeInflated, scratchFile } from '../normalize/inflate.js';
import { MAX_OBJECT_BYTES, OBJECT_TOO_LARGE, objectSizeFor, objectSizeOption } from '../normalize/object-size.js';
import { ledgerWriter } from '../ledger.js';
import { keepApart, rawFileDamage } from './damaged.js';
import { rawIndexWriter } from './raw-index.js';
import type { Warehouse } from '../warehouse.js';

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
export async function reindexRaw(
  wh: Warehouse,
  files?: readonly string[],
  o: { batchBytes?: number; damaged?: DamagedRawFile[]; at?: Date } = {},
): Promise<number> {
  await wh.flushIndex();
  if (!files) {
    const indexed = new Set((await wh.all<{ f: string }>(`SELECT DISTINCT file AS f FROM raw_responses`)).map((r) => r.f));
    const all = await readdir(wh.rawDir, { recursive: true });
    files = all.filter((f) => f.endsWith('.ndjson.gz') && !indexed.has(join('raw', f))).map((f) => join(wh.rawDir, f));
  }
  if (files.length === 0) return 0;
  const before = await count(wh);
  // Every file is read whole in Node first: a damaged one (cut off, torn) is kept apart with
  // what can be read of it indexed from its salvaged copy, instead of failing its batch
  // (DuckDB's "Malformed JSON" stopped a replay with an unexpected error).
  const whole: string[] = [];
  const bad: { file: string; error: string }[] = [];
  const sorted = [...new Set(files)].sort();
  for (let i = 0; i < sorted.length; i += CHECK_AT_ONCE) {
    const some = sorted.slice(i, i + CHECK_AT_ONCE);
    const errors = await Promise.all(some.map((f) => rawFileDamage(f)));
    some.forEach((f, j) => (errors[j] === null ? whole.push(f) : bad.push({ file: relativeTo(wh, f), error: errors[j]! })));
  }
  if (bad.length > 0) {
    const set = await setAsideDamaged(wh, bad, o.at);
    o.damaged?.push(...set);
  }
  const sized = await Promise.all(whole.map(async (f) => ({ f, size: (await stat(f)).size })));
  for (const batch of byteBatches(sized, o.batchBytes ?? BATCH_BYTES)) {
    try {
      await indexBatch(wh, batch);
    } catch (err) {
      if (isObjectTooLarge(err)) throw err;
      // Bytes DuckDB will not read although they inflate (lines that are not JSON): each file
      // alone, and one that still fails is kept apart like a damaged one.
      for (const one of batch) {
        try {
          await indexBatch(wh, [one]);
        } catch (e) {
          if (isObjectTooLarge(e)) throw e;
          const rel = relativeTo(wh, one.f);
          const set = await setAsideDamaged(wh, [{ file: rel, error: (e as Error).message.split('\n')[0]! }], o.at, { salvage: !rel.includes('.salvaged') });
          o.damaged?.push(...set);
        }
      }
    }
  }
  return (await count(wh)) - before;
}

function isObjectTooLarge(err: unknown): boolean {
  return (err as Error).message.includes('past the') && OBJECT_TOO_LARGE.test((err as Error).message);
}

function relativeTo(wh: Warehouse, f: string): string {
  return f.startsWith(`${wh.dir}/`) ? f.slice(wh.dir.length + 1) : f;
}

/** A landed file found damaged and kept apart (see {@link setAsideDamaged}). */
export interface DamagedRawFile {
  /** The file as it was named (relative to the warehouse). */
  file: string;
  /** Why it cannot be read whole. */
  error: string;
  /** Its new name (`….ndjson.gz.damaged`): kept, never deleted, read by nothing; null when the file was gone. */
  keptAs: string | null;
  /** The file holding the answers read back from it (indexed, loaded), or null when none could be. */
  salvaged: string | null;
  /** Answers read back from it. */
  kept: number;
  /** Calls the raw index had in it whose answer could not be read back. */
  lostCalls: string[];
  /** Tasks whose answer was among those. */
  lostTasks: string[];
  /** Those of them already collected, put in `task_refetches` to be fetched again (task_get, free). */
  refetch: string[];
}

/**
 * Keeps damaged landed files apart ({@link keepApart}): each is renamed `….damaged`, what can
 * be read of it goes to a `….salvaged.ndjson.gz` file that is indexed in its place, and its
 * index rows are dropped (their ledger rows stay: the calls were made and paid). The tasks
 * whose answer is lost with the damaged part and that are already collected (their rows stay
 * as they are) get a `task_refetches` row (`date_fixed` is `raw damaged <time>`), so the
 * collection fetches them again with `task_get`, which is free, never posting them again; a
 * task not collected yet is fetched again by the collection anyway.
 */
export async function setAsideDamaged(
  wh: Warehouse,
  bad: readonly { file: string; error: string }[],
  at: Date = new Date(),
  o: { salvage: boolean } = { salvage: true },
): Promise<DamagedRawFile[]> {
  const out: DamagedRawFile[] = [];
  for (const { file, error } of bad) {
    const before = await wh.all<{ call_id: string; task_ids: string[]; at: string | null }>(
      `SELECT call_id, task_ids, epoch_us(received_at)::VARCHAR AS at FROM raw_responses WHERE file = $1`,
      [file],
    );
    const apart = await keepApart(join(wh.dir, file), o);
    await wh.run(`DELETE FROM raw_responses WHERE file = $1`, [file]);
    let kept: { call_id: string; task_ids: string[] }[] = [];
    if (apart.salvaged) {
      await reindexRaw(wh, [apart.salvaged], { at });
      kept = await wh.all(`SELECT call_id, task_ids FROM raw_responses WHERE file = $1`, [relativeTo(wh, apart.salvaged)]);
    }
    const keptCalls = new Set(kept.map((r) => r.call_id));
    const keptTasks = new Set(kept.flatMap((r) => r.task_ids));
    const lostCalls = before.map((r) => r.call_id).filter((c) => !keptCalls.has(c));
    const lostTasks = [...new Set(before.filter((r) => !keptCalls.has(r.call_id)).flatMap((r) => r.task_ids))].filter((t) => !keptTasks.has(t)).sort();
    out.push({
      file,
      error,
      keptAs: apart.keptAs && relativeTo(wh, apart.keptAs),
      salvaged: apart.salvaged && relativeTo(wh, apart.salvaged),
      kept: apart.lines,
      lostCalls,
      lostTasks,
      refetch: await queueRefetch(wh, await withoutNewerAnswer(wh, lostTasks, before), at),
    });
  }
  return out;
}

/**
 * The tasks of `lost` with no readable answer indexed received as late as the lost one (`rows`:
 * the damaged file's index rows): a task fetched again since (its answer there could not be
 * loaded, so it stayed posted) has its rows from the newer answer, and is not fetched a third time.
 */
async function withoutNewerAnswer(wh: Warehouse, lost: readonly string[], rows: readonly { task_ids: string[]; at: string | null }[]): Promise<string[]> {
  if (lost.length === 0) return [];
  const lostAt = new Map<string, bigint>();
  for (const r of rows) {
    const at = r.at === null ? 0n : BigInt(r.at);
    for (const t of r.task_ids) if (at > (lostAt.get(t) ?? -1n)) lostAt.set(t, at);
  }
  const newest = new Map(
    (
      await wh.all<{ t: string; at: string | null }>(
        `SELECT task_id AS t, epoch_us(max(received_at))::VARCHAR AS at FROM (SELECT unnest(task_ids) AS task_id, received_at FROM raw_responses WHERE parsed)
         WHERE task_id IN (SELECT unnest(${sqlList(lost)}::VARCHAR[])) GROUP BY task_id`,
      )
    ).map((r) => [r.t, r.at === null ? 0n : BigInt(r.at)]),
  );
  return lost.filter((t) => !newest.has(t) || newest.get(t)! < (lostAt.get(t) ?? 0n));
}

/** Puts collected tasks of a task_get endpoint (no refetch open yet) in `task_refetches`; returns those put. */
async function queueRefetch(wh: Warehouse, taskIds: readonly string[], at: Date): Promise<string[]> {
  if (taskIds.length === 0) return [];
  const rows = await wh.all<{ task_id: string; endpoint_id: string }>(
    `SELECT DISTINCT task_id, endpoint_id FROM tasks WHERE state = 'collected' AND task_id IN (SELECT unnest(${sqlList(taskIds)}::VARCHAR[]))
       AND task_id NOT IN (SELECT task_id FROM task_refetches WHERE refetched_at IS NULL)`,
  );
  const fetchable = rows.filter((r) => {
    const post = ENDPOINTS.find((e) => e.id === r.endpoint_id);
    return post !== undefined && taskFunctionOf(post) !== undefined;
  });
  if (fetchable.length === 0) return [];
  const mark = `raw damaged ${at.toISOString()}`;
  await wh.run(
    `INSERT INTO task_refetches (task_id, date_fixed, endpoint_id, listed_at)
     SELECT unnest(${sqlList(fetchable.map((r) => r.task_id))}::VARCHAR[]), $1, unnest(${sqlList(fetchable.map((r) => r.endpoint_id))}::VARCHAR[]), $2::TIMESTAMPTZ`,
    [mark, at.toISOString()],
  );
  return fetchable.map((r) => r.task_id).sort();
}

/**
 * Checks landed files the raw index names before anything drops rows they hold or copies
 * them (`files`: relative to the warehouse; a replay before it empties its tables, compaction
 * before it joins them), and keeps the damaged ones apart ({@link setAsideDamaged}).
 */
export async function checkIndexedFiles(wh: Warehouse, files: readonly string[], at?: Date, runId?: string): Promise<DamagedRawFile[]> {
  if (files.length === 0) return [];
  // `runId`: the files are that run's (compactRaw's mid-night compaction): only its index rows are read.
  const ofRun = runId === undefined ? '' : ` AND run_id = ${sqlString(runId)}`;
  const counts = new Map(
    (await wh.all<{ f: string; n: number }>(`SELECT file AS f, count(*)::INT AS n FROM raw_responses WHERE file IN (SELECT unnest(${sqlList(files)}::VARCHAR[]))${ofRun} GROUP BY file`)).map((r) => [r.f, r.n]),
  );
  const bad: { file: string; error: string }[] = [];
  // A few at a time: a night before compaction is thousands of small files, inflated on the thread pool.
  for (let i = 0; i < files.length; i += CHECK_AT_ONCE) {
    const some = files.slice(i, i + CHECK_AT_ONCE);
    const errors = await Promise.all(some.map((f) => rawFileDamage(join(wh.dir, f), counts.get(f) ?? 0)));
    some.forEach((f, j) => errors[j] !== null && bad.push({ file: f, error: errors[j]! }));
  }
  return bad.length > 0 ? setAsideDamaged(wh, bad, at) : [];
}

const CHECK_AT_ONCE = 16;

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
           charge_cny, refund_cny, cost_usd, balance_cny, tasks_sent, request_hash,
           -- Callback lines say so; older ones are known by their file name. Callbacks are not our calls: no ledger row.
           is_callback AS callback
    FROM (SELECT *,
                 CASE WHEN parsed THEN [t.id FOR t IN coalesce(from_json(body -> 'tasks', '[{"id":"VARCHAR","status_code":"BIGINT","result":"JSON"}]'), []) IF t.status_code = 20000 AND t.result IS NOT NULL AND t.result::VARCHAR <> 'null'] ELSE [] END AS ok_ids,
                 coalesce(callback, false) OR landed_file LIKE '%-cb-%' AS is_callback
    FROM (SELECT *, ${file} AS landed_file FROM read_json(${files}, columns = {
      call_id: 'VARCHAR', run_id: 'VARCHAR', pipeline: 'VARCHAR', endpoint_id: 'VARCHAR', method: 'VARCHAR', path: 'VARCHAR', http_status: 'INTEGER',
      request_id: 'VARCHAR', received_at: 'VARCHAR', kind: 'VARCHAR', parsed: 'BOOLEAN', shape: 'VARCHAR[]', charge_cny: 'VARCHAR', refund_cny: 'VARCHAR',
      cost_usd: 'VARCHAR', balance_cny: 'VARCHAR', tasks_sent: 'INTEGER', callback: 'BOOLEAN', callback_task: 'VARCHAR', request_hash: 'VARCHAR', body: 'JSON'
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
