import { join } from 'node:path';
import { EtlError } from '../../errors.js';
import { ident, oneRowOf, sqlList, sqlString, sqlType } from '../columns.js';
import { byteBatches } from '../normalize/byte-batches.js';
import { inflate, removeInflated, scratchFile } from '../normalize/inflate.js';
import { intoPieces } from '../normalize/pieces.js';
import { objectSizeOption } from '../normalize/object-size.js';
import type { KindPlan, TablePlan } from '../normalize/table-plan.js';
import { insertMarked, markReplaced, nextRowIdsOf } from '../publish/mark-loaded.js';
import type { Warehouse } from '../warehouse.js';
import { noteBodyReaders, readsDirect, sizesOf, takeEarly, type Batches, type Early } from './batches.js';
import { filesIn, type TableRead, type Work } from './plan.js';
import type { LoadReport } from './report.js';

/*
 * The load's last step: one transaction for all the kinds' rows, their new columns, and the
 * caller's own statements (alsoInTransaction).
 */

/** Some answers of these landed files gave no rows when read as gzip. */
export class ShortRead extends Error {
  constructor(readonly files: string[]) {
    super(`DuckDB read landed files short: ${files.join(', ')}`);
  }
}

/** What loadBatch needs of the whole load. */
interface Loading {
  report: LoadReport;
  batches: Batches;
  early: Early;
  /** The condition on `raw_responses` for the selection's rows (lookAtSelection). */
  selected: string;
  /** The optimizer setting held off for the inserts (INSERTS_OPTIMIZER_OFF). */
  hold: ReturnType<Warehouse['optimizerOff']>;
}

/**
 * Writes the planned kinds in one transaction: each kind's new columns, the old rows of its
 * replaced tasks, then its files a batch at a time (loadBatch), and the caller's own statements.
 */
export async function commit(
  wh: Warehouse,
  work: Work[],
  o: { countPerTask: boolean; selected: string },
  report: LoadReport,
  alsoInTransaction: (report: LoadReport) => Promise<void>,
  batches: Batches,
  early: Early,
): Promise<void> {
  // The inserts' optimizer setting (insertRows): changed on a connection of its own while the
  // transaction begins and checks for replaced rows, and put back after the last insert while
  // DuckDB checks the read: once per load, not around each insert, where the change and the
  // reset would each sit on the load's path.
  const hold = wh.optimizerOff(INSERTS_OPTIMIZER_OFF);
  try {
    await wh.transaction(async () => {
      for (const [k, w] of work.entries()) {
        const { plan, files, reads, received } = w;
        // The tables that read the bodies (the others read the heads): how a batch is read, and
        // what the kind's next load in this process expects when it cuts ahead (cutEarly).
        const bodyReaders = reads.filter((r) => !r.heads).length;
        noteBodyReaders(plan.kind, bodyReaders);
        // The row id from which each table's rows of this load were appended (its first batch's,
        // insertMarked): the per-task count below reads only the row groups this load wrote, not
        // a year of history.
        const loadedFrom = new Map<string, string>();
        await applySchema(wh, plan, report);
        // A replaced task's old rows go once, before the first batch of files inserts any.
        const mayHaveRows = await picksMayHaveRows(wh);
        await clearReplaced(wh, reads.map((r) => r.t).filter((t) => t.replaceKey !== 'task_id' || mayHaveRows));
        // The kind's files are read a batch at a time (LOAD_BATCH_BYTES of gzip, or one larger
        // file alone), so scratch space and memory are bounded by a batch however many nights
        // the selection spans (a replay reads the whole history). A batch of READ_DIRECT_BELOW
        // or more that holds a large file (a compacted segment) is inflated once (inflate.ts)
        // into a plain NDJSON scratch file that each table then reads with only the fields it
        // needs: one gunzip instead of one per table, and a file DuckDB splits across its
        // threads; a smaller one, or one of small files only, is read as gzip from the landed
        // files in pieces of about 1 MiB of bodies (2 on the disk; intoPieces: a compacted segment cut, a
        // night's one-body files joined; readsDirect).
        // Why, and what was measured and rejected: docs/warehouse.md, "Load path, and why".
        const sized = await (early.sized?.files === files ? early.sized.sizes : sizesOf(wh, files));
        await hold.ready;
        const kindBatches = byteBatches(sized, batches.bytes);
        for (const [b, batch] of kindBatches.entries()) {
          const last = k === work.length - 1 && b === kindBatches.length - 1;
          const inBatch = filesIn(w, batch.map(({ f }) => f));
          await loadBatch(wh, batch, { reads, bodyReaders, received, inBatch, loadedFrom, last }, { report, batches, early, selected: o.selected, hold });
        }
        if (o.countPerTask) await countPerTask(wh, reads, loadedFrom, report);
      }
      // Put back before the run's own statements (alsoInTransaction), which are planned as usual.
      await hold.release();
      await alsoInTransaction(report);
    });
  } finally {
    await hold.release();
  }
}

/**
 * One batch of a kind's files into each of its tables: read as gzip from the landed files (and
 * pieces cut from them), or from one plain scratch file; a short gzip read throws ShortRead.
 */
async function loadBatch(
  wh: Warehouse,
  batch: readonly { f: string; size: number }[],
  kind: { reads: readonly TableRead[]; bodyReaders: number; received: string; inBatch: string; loadedFrom: Map<string, string>; last: boolean },
  run: Loading,
): Promise<void> {
  const landed = batch.map(({ f, size }) => ({ file: join(wh.dir, f), size }));
  const direct = readsDirect(batch, run.batches.readDirectBelow, kind.bodyReaders);
  // Read as gzip from the landed files (and pieces cut from them), or from one plain scratch file.
  const read: { files: string[]; scratch: string[]; gzip: boolean } = { files: [], scratch: [], gzip: direct };
  try {
    if (direct) {
      const pieces = (await takeEarly(run.early, batch)) ?? (await intoPieces(landed, wh.dir, run.batches.pieceBytes));
      read.files = pieces.read;
      read.scratch = pieces.scratch;
    } else {
      const plain = scratchFile(wh.dir);
      read.files = [plain];
      read.scratch = [plain];
      await inflate(landed.map((l) => l.file), plain);
    }
    // A batch holding an answer larger than DuckDB reads by default (known only after it refused it).
    const largest = run.batches.large && Math.max(0, ...batch.map(({ f }) => run.batches.large!.get(f) ?? 0));
    const inBatch = `${kind.inBatch} AND parsed${kind.received}`;
    const firstRowIds = new Map<TablePlan, string>();
    // Where each table's rows of this batch will start, for all of them in one look.
    const nextRowIds = await nextRowIdsOf(wh, kind.reads.map((r) => r.t));
    // The scratch files go as soon as the last table that reads them has (not after the check
    // below): Node's file system threads remove them while DuckDB goes on with the rest.
    const lastReader = kind.reads.findLastIndex((r) => !r.heads);
    for (const [i, { t, heads, type, select, list }] of kind.reads.entries()) {
      // A result-level table reads the bodies' heads (raw_heads); else it parses the
      // bodies again (a reindexed warehouse has no heads). The heads of the batch's
      // selected answers, by the selection (`_sel`) rather than the raw index: rows come
      // only from picks (selectRowsFrom), and picks only from selected answers.
      const source = heads
        ? `(SELECT call_id, run_id, received_at, from_json(head, ${type}) AS body FROM raw_heads
           WHERE call_id IN (SELECT call_id FROM _sel WHERE ${inBatch})${kind.received})`
        : `read_json(${sqlList(read.files)}, columns = {call_id: 'VARCHAR', run_id: 'VARCHAR', received_at: 'VARCHAR', body: ${type}}, format = 'newline_delimited', compression = '${read.gzip ? 'gzip' : 'uncompressed'}'${objectSizeOption(largest)})`;
      const { rows, firstRowId } = await insertRows(wh, t, select(source), nextRowIds.get(t.name)!, list);
      // Rows read from heads are not read by DuckDB's gzip reader: nothing to check.
      if (!heads) firstRowIds.set(t, firstRowId);
      if (!kind.loadedFrom.has(t.name)) kind.loadedFrom.set(t.name, firstRowId);
      run.report.rows.set(t.name, (run.report.rows.get(t.name) ?? 0) + rows);
      // Started on the next turn of the event loop, once the next statement is on its way to
      // DuckDB: starting 464 removals holds this thread about 10 ms.
      if (i === lastReader) setImmediate(() => removeScratch(run.early, read));
    }
    // After the load's last insert, the setting goes back while DuckDB checks the read.
    if (kind.last) void run.hold.release();
    if (read.gzip) {
      const short = await readShort(wh, firstRowIds, kind.inBatch, run.selected);
      if (short.length > 0) throw new ShortRead(short);
    }
  } finally {
    removeScratch(run.early, read);
  }
}

/**
 * Starts removing a batch's scratch files (once: the list is emptied), on Node's file system
 * threads; the load awaits the removals when it ends (Early.removing). A night of 10,000 files has
 * 464 pieces: starting their removals takes the main thread 10 to 15 ms.
 */
function removeScratch(early: Early, read: { scratch: string[] }): void {
  if (read.scratch.length === 0) return;
  early.removing.push(Promise.allSettled(read.scratch.map((f) => removeInflated(f))));
  read.scratch = [];
}

/** Rows inserted per picked task (the report's `perTask`), from the row groups this load appended (`loadedFrom`). */
async function countPerTask(wh: Warehouse, reads: readonly TableRead[], loadedFrom: ReadonlyMap<string, string>, report: LoadReport): Promise<void> {
  for (const { t } of reads) {
    if (t.replaceKey !== 'task_id' || !report.rows.get(t.name)) continue;
    const counts = await wh.all<{ k: string; n: number }>(
      `SELECT task_id AS k, count(*)::INT AS n FROM ${ident(t.name)} WHERE rowid >= ${loadedFrom.get(t.name) ?? 0} AND task_id IN (SELECT task_id FROM _pick) GROUP BY ALL`,
    );
    for (const c of counts) report.perTask.set(c.k, (report.perTask.get(c.k) ?? 0) + c.n);
  }
}

/**
 * The landed files of the batch (`inBatch`: its condition on a raw index row, filesIn; read as gzip) holding a selected answer that should
 * have given rows to one of the tables and gave none: its body holds objects at the table's
 * rows path (the raw index's shape says so), yet no row of its picked tasks (or of the call,
 * for a table of calls) is among the rows just appended (row ids from `firstRowIds`). DuckDB's
 * gzip reader has stopped early without an error on some layouts of gzip members (0e6f089):
 * this is the net for one not yet known. Answers of several tasks are not checked: some of
 * their tasks may be picked from newer answers. A callback body holding tasks besides the
 * one it was accepted for may be flagged; the plain-text reload then gives the same rows.
 */
async function readShort(wh: Warehouse, firstRowIds: ReadonlyMap<TablePlan, string>, inBatch: string, selected: string): Promise<string[]> {
  const short = new Set<string>();
  for (const [t, first] of firstRowIds) {
    const byTask = t.columns.some((c) => c.name === 'task_id');
    if (!byTask && !t.columns.some((c) => c.name === 'call_id')) continue;
    const holds = t.rows === '' ? '' : ` AND list_contains(shape, ${sqlString(`${t.rows}:o`)})`;
    // A task that gave rows gave the first of some list at the rows level (index 0; a body is read
    // whole or not at all): one row per list is looked at, not every item.
    const firstOfList = t.rows === '' ? undefined : t.columns.find((c) => c.index === t.rows);
    const only = firstOfList ? ` AND ${ident(firstOfList.name)} = 0` : '';
    const got = byTask
      ? `SELECT call_id FROM _pick WHERE task_id IN (SELECT task_id FROM ${ident(t.name)} WHERE rowid >= ${first}${only})`
      : `SELECT call_id FROM ${ident(t.name)} WHERE rowid >= ${first} AND call_id IS NOT NULL`;
    // Answers of one task: the rows of a task picked from a newer answer are not this one's to give.
    const picked = byTask ? ' AND len(task_ids) = 1 AND call_id IN (SELECT call_id FROM _pick)' : '';
    // The answers that gave no row first; then, when there are some, which of them hold objects
    // at the rows path: the shapes are read only when some answer gave no row (reading the shapes
    // of a night's 10,000 answers took 5 to 8 ms).
    const none = await wh.all<{ call_id: string; file: string }>(
      `SELECT call_id, file FROM raw_responses WHERE ${selected} AND parsed AND ${inBatch}${picked} AND call_id NOT IN (${got})`,
    );
    if (none.length === 0) continue;
    const rows = holds
      ? await wh.all<{ file: string }>(`SELECT DISTINCT file FROM raw_responses WHERE call_id IN (SELECT unnest(${sqlList(none.map((r) => r.call_id))}::VARCHAR[]))${holds}`)
      : none;
    for (const r of rows) short.add(r.file);
  }
  return [...short].sort();
}

/**
 * New tables and columns of the plan, and their `schema_columns` rows: a new table is created
 * with all its columns at once, and the rows go in as one statement (a generic kind's first
 * load adds dozens of columns).
 */
async function applySchema(wh: Warehouse, plan: KindPlan, report: LoadReport): Promise<void> {
  if (plan.added.length === 0) return;
  // A table that somehow exists already (CREATE ... IF NOT EXISTS is then a no-op) gets its columns one by one.
  const existing = new Set((await wh.all<{ t: string }>(`SELECT table_name AS t FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = current_schema()`)).map((r) => r.t));
  const created = new Set(plan.createdTables.filter((t) => !existing.has(t)));
  for (const name of created) {
    const t = plan.tables.find((x) => x.name === name)!;
    const keys = t.columns.filter((c) => c.key);
    const rest = plan.added.filter((a) => a.table === name && !a.column.key).map((a) => a.column);
    const cols = [...keys, ...rest].map((c) => `${ident(c.name)} ${sqlType(c.kind)}${c.key ? ' NOT NULL' : ''}`);
    await wh.run(`CREATE TABLE IF NOT EXISTS ${ident(name)} (${cols.join(', ')})`);
  }
  for (const { table, column } of plan.added) {
    if (!created.has(table)) await wh.run(`ALTER TABLE ${ident(table)} ADD COLUMN IF NOT EXISTS ${ident(column.name)} ${sqlType(column.kind)}`);
  }
  const rows = plan.added.map(({ table, column }) => {
    const t = plan.tables.find((x) => x.name === table)!;
    const { columns: _c, loose: _l, ...meta } = t;
    return [table, column.name, t.columns.findIndex((c) => c.name === column.name), column.kind, column.path ?? column.index ?? column.source ?? null,
      column.name.endsWith('__v') ? column.name.slice(0, -3) : null, plan.kind, t.rows, JSON.stringify({ table: meta, column: { ...column, variant: undefined } })];
  });
  const pairs = JSON.stringify(rows.map((r) => [r[0], r[1]]));
  await wh.run(`DELETE FROM schema_columns WHERE [table_name, column_name] IN (SELECT unnest($1::JSON::VARCHAR[][]))`, [pairs]);
  const values = rows.map((_, i) => `($${i * 9 + 1}, $${i * 9 + 2}, $${i * 9 + 3}, $${i * 9 + 4}, $${i * 9 + 5}, $${i * 9 + 6}, false, $${i * 9 + 7}, $${i * 9 + 8}, $${i * 9 + 9}::JSON)`);
  await wh.run(`INSERT INTO schema_columns VALUES ${values.join(', ')}`, rows.flat());
  for (const { table, column } of plan.added) report.added.push({ table, column: column.name, kind: column.kind });
}

/**
 * Whether any picked task may have rows already: one the tasks table marks `collected`, or one
 * it does not know (a replay of raw files, a load without state). A task's rows and its
 * `collected` mark commit in one transaction (RunStore.markCollected), and no task leaves
 * `collected` (lifecycle.ts), so a night's new tasks skip the look for old rows in every
 * table, which would read the task ids of a year of rows.
 */
async function picksMayHaveRows(wh: Warehouse): Promise<boolean> {
  // tasks RIGHT JOIN _pick, not _pick LEFT JOIN tasks: with the inserts' optimizer off (insertRows),
  // DuckDB builds on the right side as written, which must be the night's picks, not a year of
  // tasks.
  const hit = await wh.all(
    `SELECT 1 FROM tasks AS t RIGHT JOIN _pick AS p ON t.task_id = p.task_id WHERE t.task_id IS NULL OR t.state = 'collected' LIMIT 1`,
  );
  return hit.length > 0;
}

/**
 * Deletes the rows of the selection's tasks (or calls) already in the tables, from those that
 * have any: a first load is a plain insert. Which tables have some is one statement for all.
 */
async function clearReplaced(wh: Warehouse, tables: readonly TablePlan[]): Promise<void> {
  if (tables.length === 0) return;
  const keysOf = (t: TablePlan) => `${ident(t.replaceKey)} IN (${t.replaceKey === 'task_id' ? `SELECT task_id FROM _pick` : `SELECT call_id FROM _sel`})`;
  // Each look stops at its first row.
  const looks = tables.map((t, i) => `SELECT count(*)::INT AS p${i} FROM (SELECT 1 FROM ${ident(t.name)} WHERE ${keysOf(t)} LIMIT 1)`);
  const [present] = await wh.all<Record<string, number>>(oneRowOf(looks));
  for (const [i, t] of tables.entries()) {
    if (!present?.[`p${i}`]) continue;
    // The partitions those rows sit in are republished (src/warehouse/publish).
    await markReplaced(wh, t, keysOf(t));
    await wh.run(`DELETE FROM ${ident(t.name)} WHERE ${keysOf(t)}`);
  }
}

/** The optimizer a load's inserts run with off (insertRows). */
const INSERTS_OPTIMIZER_OFF = 'build_side_probe_side';

/**
 * The inserts of a load run with DuckDB's `build_side_probe_side` optimizer off
 * (`Warehouse.optimizerOff`, held by commit() from before its transaction begins to its last
 * insert). Their rows are unnested from lists whose lengths DuckDB cannot estimate, so it
 * took the unnested rows (every column of every item) for the hash table of the semi-join on
 * `_pick`, and probed it with the picks, a large share of the insert's time and memory
 * (docs/performance.md). Off, each join builds on its right side
 * as written, `_pick` or `_sel`, which is never larger than the rows it filters. The load's other
 * statements that may run with it off (the checks for replaced rows; the short-read check and the
 * per-task counts, while it is put back) are written the same way, the small side on the right.
 */
async function insertRows(wh: Warehouse, t: TablePlan, sql: string, firstRowId: string, list: TableRead['list']): Promise<{ rows: number; firstRowId: string }> {
  try {
    return await insertMarked(wh, t, sql, firstRowId, list);
  } catch (err) {
    throw new EtlError('ETL_WAREHOUSE', `loading ${t.name} from the raw files failed: ${(err as Error).message}. The raw files are untouched; \`pipeline replay\` can load them again.`, { cause: err, context: { stage: 'warehouse' } });
  }
}
