import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { byteBatches } from '../normalize/byte-batches.js';
import { ident, oneRowOf, receivedBetween, sqlList, sqlString, sqlType } from '../columns.js';
import { EtlError } from '../../errors.js';
import { CALLS_KIND, kindSpec } from '../normalize/result-tables/index.js';
import { clearScratch, inflate, longestLine, removeInflated, scratchFile, intoPieces } from '../normalize/inflate.js';
import { MAX_OBJECT_BYTES, OBJECT_TOO_LARGE, objectSizeFor, objectSizeOption } from '../normalize/object-size.js';
import { insertMarked, markReplaced, nextRowIdsOf } from '../publish/mark-loaded.js';
import { mergeShapes, type ShapeMap } from '../normalize/shape.js';
import { envelopeStructure, envelopeType, selectRowsFrom } from '../normalize/sql-build.js';
import { planKind, under, type KindPlan, type StoredColumn, type TablePlan } from '../normalize/table-plan.js';
import type { Warehouse } from '../warehouse.js';

/** Which landed responses to load. */
export type LoadSelection = { taskIds: readonly string[] } | { callIds: readonly string[] } | { kinds?: readonly string[]; all: true };

export interface LoadReport {
  /** Rows inserted per table. */
  rows: Map<string, number>;
  /** Rows inserted per task id (all tables), for the tasks table's `rows_loaded`. */
  perTask: Map<string, number>;
  /** Raw files DuckDB could not read: reported and skipped, the others load. */
  skippedFiles: { file: string; error: string }[];
  /** Responses whose body was not JSON (kept raw, nothing to load). */
  unparsed: string[];
  /** Columns and tables this load added. */
  added: { table: string; column: string; kind: string }[];
  /**
   * For a selection by task ids: the ids with a landed, parsed answer to load (the rest have
   * none indexed: their rows cannot be in this load, and they must not be marked collected),
   * each with the call its rows come from (its newest answer that loaded): a caller that fetched
   * a task again can tell whether this fetch's answer is the one loaded, or an older one because
   * the new one's file could not be read.
   */
  picked: Map<string, string>;
  /**
   * Landed files DuckDB's gzip reader read short (an answer that holds rows gave none, and no
   * error, as in 0e6f089): the load was rolled back and done again from plain text.
   */
  rereadPlain: string[];
}

/** The selected, parsed responses of one kind. */
interface Landed {
  kind: string;
  files: string[];
  calls: number;
  /** All the index rows of `files` (selected or not): how many, and `AND received_at BETWEEN …` bounding them. */
  inFiles: { rows: number; received: string };
}

/**
 * Loads landed responses into their typed tables, reading the raw gzip NDJSON with
 * DuckDB's `read_json` and explicit column types (see sql-build.ts). All of the
 * selection's rows, any new columns, and `alsoInTransaction` (the tasks' collected
 * marks) commit together. Rows are keyed by task id (by call id for `/v1`), and a task's
 * old rows are replaced, so loading the same body twice changes nothing; when a task was
 * fetched more than once, its newest response wins. A kind's files are read
 * `o.batchBytes` of gzip at a time (default 128 MiB; one larger file alone), so scratch
 * space and memory are bounded by a batch, not by the selection; a batch of less than
 * `o.readDirectBelow` bytes (default 8 MiB), or of small files only, is read from the landed
 * files without a scratch file, in pieces of `o.pieceBytes` of bodies (default 1 MiB; large files
 * cut, small ones joined; inflate.ts). `o.readDirectBelow: 0` inflates every batch.
 */
export async function loadLanded(
  wh: Warehouse,
  sel: LoadSelection,
  alsoInTransaction: (report: LoadReport) => Promise<void> = async () => {},
  o: { batchBytes?: number; readDirectBelow?: number; pieceBytes?: number } = {},
): Promise<LoadReport> {
  const report: LoadReport = { rows: new Map(), perTask: new Map(), skippedFiles: [], unparsed: [], added: [], picked: new Map(), rereadPlain: [] };
  await wh.flushIndex();
  await clearScratch(wh.dir);
  await selectCalls(wh, sel);
  const { kinds, selected } = await lookAtSelection(wh);
  report.unparsed = kinds.flatMap((k) => k.unparsed);
  const byKind: Landed[] = kinds.filter((k) => k.calls > 0).map(({ kind, files, calls, inFiles }) => ({ kind, files, calls, inFiles }));
  const batches = { bytes: o.batchBytes ?? LOAD_BATCH_BYTES, readDirectBelow: o.readDirectBelow ?? READ_DIRECT_BELOW, pieceBytes: o.pieceBytes };
  // The first batch is cut into pieces (here, on the main thread) while DuckDB looks at the plan of the load below.
  const first = byKind[0] && { files: byKind[0].files, sizes: sizesOf(wh, byKind[0].files) };
  const early: Early = { cut: first ? cutEarly(wh, first.sizes, batches) : undefined, removing: [], sized: first };
  try {
    return await planAndLoad(wh, sel, selected, byKind, report, alsoInTransaction, batches, early);
  } finally {
    // A cut the load did not use (it failed first, or a retry read plain text) leaves no scratch file.
    const left = await early.cut;
    early.cut = undefined;
    if (left) await Promise.all(left.pieces.scratch.map((f) => removeInflated(f)));
    // A scratch file that could not be removed is left to the next load's clearScratch.
    await Promise.all(early.removing);
  }
}

type Batches = {
  bytes: number;
  readDirectBelow: number;
  pieceBytes: number | undefined;
  /** Files with a line longer than DuckDB reads by default, and the `maximum_object_size` each needs (object-size.ts). */
  large?: ReadonlyMap<string, number>;
};

/** What intoPieces gives: the files to read, and the scratch files among them. */
type Pieces = Awaited<ReturnType<typeof intoPieces>>;

/** The pieces of a load's first batch, cut ahead (`key`: its files). */
type Cut = { key: string; pieces: Pieces };

interface Early {
  cut: Promise<Cut | undefined> | undefined;
  /**
   * Removals of the scratch files read so far: started as soon as a batch is read, awaited
   * when the load ends, so Node's file system threads delete them while DuckDB goes on (about
   * 5 ms for a night's 50 pieces, otherwise spent before the commit).
   */
  removing: Promise<unknown>[];
  /**
   * The sizes of the first kind's files, read once for the cut and the commit (a night of a
   * million SERP items before compaction is 10,000 files).
   */
  sized: { files: readonly string[]; sizes: Promise<{ f: string; size: number }[]> } | undefined;
}

/** The size of each of `files` (relative to the warehouse). */
function sizesOf(wh: Warehouse, files: readonly string[]): Promise<{ f: string; size: number }[]> {
  return Promise.all(files.map(async (f) => ({ f, size: (await stat(join(wh.dir, f))).size })));
}

/**
 * Cuts the first batch of the files (`sizes`: each with its size) into pieces, as commit() would,
 * when it is read as gzip; undefined when it is not, or when cutting fails (commit() then cuts it
 * and meets the error).
 */
async function cutEarly(wh: Warehouse, sizes: Promise<{ f: string; size: number }[]>, batches: Batches): Promise<Cut | undefined> {
  try {
    const sized = await sizes;
    const first = byteBatches(sized, batches.bytes)[0];
    if (!first || !readsDirect(first, batches.readDirectBelow)) return undefined;
    const pieces = await intoPieces(
      first.map(({ f, size }) => ({ file: join(wh.dir, f), size })),
      wh.dir,
      batches.pieceBytes,
    );
    return { key: batchKey(first), pieces };
  } catch {
    return undefined;
  }
}

function batchKey(batch: readonly { f: string; size: number }[]): string {
  return batch.map(({ f, size }) => `${f}\u0000${size}`).join('\n');
}

/** The pieces cut ahead when they are those of `batch` (taken once); any other cut is removed. */
async function takeEarly(early: Early, batch: readonly { f: string; size: number }[]): Promise<Pieces | undefined> {
  if (!early.cut) return undefined;
  const c = await early.cut;
  early.cut = undefined;
  if (!c) return undefined;
  if (c.key === batchKey(batch)) return c.pieces;
  await Promise.all(c.pieces.scratch.map((f) => removeInflated(f)));
  return undefined;
}

async function planAndLoad(
  wh: Warehouse,
  sel: LoadSelection,
  selected: string,
  byKind: readonly Landed[],
  report: LoadReport,
  alsoInTransaction: (report: LoadReport) => Promise<void>,
  batches: Batches,
  early: Early,
): Promise<LoadReport> {
  // Every look, and the pick after them, is sent to DuckDB at once: it runs them in turn while
  // cutEarly cuts the first batch here, on the main thread, and each kind is planned here as its
  // look comes back, while DuckDB goes on with the next one or the pick.
  const planning = byKind.map(async ({ kind, files, calls, inFiles: { rows: n, received } }): Promise<Work> => {
    // The shapes of every body in the files, not only the selected ones: DuckDB reads whole
    // files, so a compacted segment's other bodies must fit the explicit types too. With them,
    // in the same look: whether every body of the files has a head (raw_heads), and the
    // columns stored for the kind.
    const parsedInFiles = `file IN (SELECT unnest(${sqlList(files)}::VARCHAR[])) AND parsed${received}`;
    // Three one-row subqueries in FROM, not scalar subqueries in SELECT: DuckDB wraps each of those
    // in a check that it gave one row (an aggregate of its own), about 4 ms more. The kind is
    // written in, not bound: a statement with parameters is three calls into DuckDB (extract,
    // prepare, run), each of which waits for the main thread between; one without is one.
    const [look] = await wh.all<{ shape: string[]; headless: number; stored: StoredColumn[] }>(
      `SELECT a.shape, b.headless, c.stored
       FROM (SELECT coalesce(list(DISTINCT s), []) AS shape FROM (SELECT unnest(shape) AS s FROM raw_responses WHERE ${parsedInFiles})) AS a,
            (SELECT count(*)::INT AS headless FROM raw_responses WHERE ${parsedInFiles} AND call_id NOT IN (SELECT call_id FROM raw_heads WHERE true${received})) AS b,
            (SELECT coalesce(list({table_name: table_name, column_name: column_name, result_kind: result_kind, spec: spec::VARCHAR} ORDER BY table_name, position), []) AS stored
             FROM schema_columns WHERE result_kind = ${sqlString(kind)}) AS c`,
    );
    const shape = mergeShapes(look!.shape);
    // Some body is a `/v3` envelope (`tasks[]`).
    const envelope = shape.get('tasks')?.has('a') ?? false;
    const plan = planKind(kindSpec(kind, envelope), look!.stored, shape);
    // The result-level tables read the bodies' heads when every body of the files has one.
    const fromHeads = look!.headless === 0 ? headTables(plan, shape) : new Set<TablePlan>();
    // Each table's SELECT is built here, with the plan, rather than between the checks for
    // replaced rows and the insert (about 3.7 ms of JavaScript in a fresh process).
    const select = { ...(n > calls ? { where: 'call_id IN (SELECT call_id FROM _sel)' } : {}), pickTable: '_pick' };
    const reads = [...plan.tables]
      .sort((a, b) => depth(b.rows) - depth(a.rows))
      .map((t): TableRead => {
        const heads = fromHeads.has(t);
        const type = sqlString(heads ? envelopeStructure([t]) : envelopeType([t]));
        return { t, heads, type, select: selectRowsFrom(t, select), list: listOf(t) };
      });
    return { plan, files, reads, received };
  });
  const picking = pickNewest(wh, selected);
  // All settle first, so that no statement is left running behind a failure.
  const settled = await Promise.allSettled([...planning, picking]);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const work = await Promise.all(planning);
  if ('taskIds' in sel) await readPicks(wh, report);
  const how = { countPerTask: 'taskIds' in sel, selected };
  const load = async (w: typeof work) => {
    try {
      await commit(wh, w, how, report, alsoInTransaction, batches, early);
    } catch (err) {
      if (!(err instanceof ShortRead)) throw err;
      // Rolled back whole: load it all again from plain text, which DuckDB has never read short.
      forget(report);
      for (const f of err.files) if (!report.rereadPlain.includes(f)) report.rereadPlain.push(f);
      await commit(wh, w, how, report, alsoInTransaction, { ...batches, readDirectBelow: 0 }, early);
    }
  };
  try {
    await load(work);
  } catch (err) {
    // A raw file the load cannot read (torn gzip, bytes that are not NDJSON) fails the whole
    // batch: find such files, report them, and load the others.
    const { bad, large } = await unreadable(wh, [...new Set(work.flatMap((w) => w.files))]);
    if (bad.length === 0 && large.size === 0) throw err;
    report.skippedFiles.push(...bad);
    forget(report);
    report.rereadPlain = report.rereadPlain.filter((f) => !bad.some((b) => b.file === f));
    // Picked again without those files: a task keeps an older answer's rows if it has one, and
    // one whose only answer is there is not picked (a run leaves it posted, to fetch it again).
    await pickNewest(wh, `${selected} AND file NOT IN (SELECT unnest(${sqlList(bad.map((b) => b.file))}::VARCHAR[]))`);
    if ('taskIds' in sel) await readPicks(wh, report);
    const good = work.map((w) => ({ ...w, files: w.files.filter((f) => !bad.some((b) => b.file === f)) })).filter((w) => w.files.length > 0);
    batches = { ...batches, large };
    await load(good);
  }
  return report;
}

/** One kind's part of a load. */
interface Work {
  plan: KindPlan;
  files: string[];
  /**
   * The plan's tables, deepest rows first (items before their results): the largest read then
   * starts from a clean slate, about 40 MB less peak RSS for SERP than the other order.
   */
  reads: TableRead[];
  /** `AND received_at BETWEEN …` of the files' index rows (receivedWithin). */
  received: string;
}

/** How a load reads one table's rows. */
interface TableRead {
  t: TablePlan;
  /** It reads `raw_heads` instead of the bodies (headTables): every body of the files has a head. */
  heads: boolean;
  /** The bodies' type for read_json (envelopeType), or the heads' structure for from_json (envelopeStructure), as SQL text. */
  type: string;
  /** Its SELECT from a source of landed lines; only the rows of the picks, and of the selection when the files hold other bodies. */
  select: (source: string) => string;
  /** Its rows list's index column and the columns whose value is the same for all the items of a list (insertMarked). */
  list: { index: string; sameInList: ReadonlySet<string> } | undefined;
}

/**
 * A table's rows list (listOf: its index column) and the columns read above it, the same for all
 * the items of one list: the call's ids, and the values and indexes of the levels above the rows
 * (a SERP item's task id and check date). Undefined for a table of one row per body.
 */
function listOf(t: TablePlan): TableRead['list'] {
  if (t.rows === '') return undefined;
  const index = t.columns.find((c) => c.index === t.rows);
  if (!index) return undefined;
  const same = t.columns.filter((c) => c.source !== undefined || (c.index !== undefined ? !under(c.index, t.rows) : c.abs !== undefined && !under(c.abs, t.rows)));
  return { index: index.name, sameInList: new Set(same.map((c) => c.name)) };
}

/**
 * The tables of a plan that read nothing a head leaves out (raw-landing.ts `headOf`): neither
 * their rows nor any column under a key of `tasks[].result[]` that some body of the files
 * (`shape`) holds as a list with objects in it. Empty when the bodies hold no such list: they
 * have no heads.
 */
function headTables(plan: KindPlan, shape: ShapeMap): Set<TablePlan> {
  const under = /^tasks\[\]\.result\[\]\.(.+)\[\]$/;
  const dropped = [...shape].filter(([path, types]) => types.has('o') && under.test(path)).map(([path]) => `tasks[].result[].${under.exec(path)![1]!}`);
  if (dropped.length === 0) return new Set();
  const touches = (p: string) => dropped.some((d) => p === d || p.startsWith(`${d}.`) || p.startsWith(`${d}[`));
  return new Set(plan.tables.filter((t) => !touches(t.rows) && !t.columns.some((c) => c.abs !== undefined && touches(c.abs))));
}

/** Forgets what a rolled-back attempt had counted. */
function forget(report: LoadReport): void {
  report.rows.clear();
  report.perTask.clear();
  report.added.length = 0;
}

/** Some answers of these landed files gave no rows when read as gzip. */
class ShortRead extends Error {
  constructor(readonly files: string[]) {
    super(`DuckDB read landed files short: ${files.join(', ')}`);
  }
}

async function commit(
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
  // DuckDB checks the read (taken around each insert, the change and the reset were about 4.5
  // and 2 ms of the load's path).
  const hold = wh.optimizerOff(INSERTS_OPTIMIZER_OFF);
  try {
    await wh.transaction(async () => {
      for (const [k, { plan, files, reads, received }] of work.entries()) {
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
        // files in pieces of about 1 MiB of bodies (intoPieces: a compacted segment cut, a
        // night's one-body files joined; readsDirect).
        // Why, and what was measured and rejected: docs/warehouse.md, "Load path, and why".
        const sized = await (early.sized?.files === files ? early.sized.sizes : sizesOf(wh, files));
        await hold.ready;
        const kindBatches = byteBatches(sized, batches.bytes);
        for (const [b, batch] of kindBatches.entries()) {
          const landed = batch.map(({ f, size }) => ({ file: join(wh.dir, f), size }));
          const direct = readsDirect(batch, batches.readDirectBelow);
          // Read as gzip from the landed files (and pieces cut from them), or from one plain scratch file.
          const read: { files: string[]; scratch: string[]; gzip: boolean } = { files: [], scratch: [], gzip: direct };
          try {
            if (direct) {
              const pieces = (await takeEarly(early, batch)) ?? (await intoPieces(landed, wh.dir, batches.pieceBytes));
              read.files = pieces.read;
              read.scratch = pieces.scratch;
            } else {
              const plain = scratchFile(wh.dir);
              read.files = [plain];
              read.scratch = [plain];
              await inflate(landed.map((l) => l.file), plain);
            }
            // A batch holding an answer larger than DuckDB reads by default (known only after it refused it).
            const largest = batches.large && Math.max(0, ...batch.map(({ f }) => batches.large!.get(f) ?? 0));
            const inBatch = `file IN (SELECT unnest(${sqlList(batch.map(({ f }) => f))}::VARCHAR[])) AND parsed${received}`;
            const firstRowIds = new Map<TablePlan, string>();
            // Where each table's rows of this batch will start, for all of them in one look.
            const nextRowIds = await nextRowIdsOf(wh, reads.map((r) => r.t));
            for (const { t, heads, type, select, list } of reads) {
              // A result-level table reads the bodies' heads (raw_heads); else it parses the
              // bodies again (a reindexed warehouse has no heads). The heads of the batch's
              // selected answers, by the selection (`_sel`) rather than the raw index: rows come
              // only from picks (selectRowsFrom), and picks only from selected answers.
              const source = heads
                ? `(SELECT call_id, run_id, received_at, from_json(head, ${type}) AS body FROM raw_heads
                   WHERE call_id IN (SELECT call_id FROM _sel WHERE ${inBatch})${received})`
                : `read_json(${sqlList(read.files)}, columns = {call_id: 'VARCHAR', run_id: 'VARCHAR', received_at: 'VARCHAR', body: ${type}}, format = 'newline_delimited', compression = '${read.gzip ? 'gzip' : 'uncompressed'}'${objectSizeOption(largest)})`;
              const { rows, firstRowId } = await insertRows(wh, t, select(source), nextRowIds.get(t.name)!, list);
              // Rows read from heads are not read by DuckDB's gzip reader: nothing to check.
              if (!heads) firstRowIds.set(t, firstRowId);
              if (!loadedFrom.has(t.name)) loadedFrom.set(t.name, firstRowId);
              report.rows.set(t.name, (report.rows.get(t.name) ?? 0) + rows);
            }
            // After the load's last insert, the setting goes back while DuckDB checks the read.
            if (k === work.length - 1 && b === kindBatches.length - 1) void hold.release();
            if (read.gzip) {
              const short = await readShort(wh, firstRowIds, batch.map(({ f }) => f), o.selected);
              if (short.length > 0) throw new ShortRead(short);
            }
          } finally {
            early.removing.push(Promise.allSettled(read.scratch.map((f) => removeInflated(f))));
          }
        }
        if (o.countPerTask) {
          for (const { t } of reads) {
            if (t.replaceKey !== 'task_id' || !report.rows.get(t.name)) continue;
            const counts = await wh.all<{ k: string; n: number }>(
              `SELECT task_id AS k, count(*)::INT AS n FROM ${ident(t.name)} WHERE rowid >= ${loadedFrom.get(t.name) ?? 0} AND task_id IN (SELECT task_id FROM _pick) GROUP BY ALL`,
            );
            for (const c of counts) report.perTask.set(c.k, (report.perTask.get(c.k) ?? 0) + c.n);
          }
        }
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
 * The landed files among `files` (a batch read as gzip) holding a selected answer that should
 * have given rows to one of the tables and gave none: its body holds objects at the table's
 * rows path (the raw index's shape says so), yet no row of its picked tasks (or of the call,
 * for a table of calls) is among the rows just appended (row ids from `firstRowIds`). DuckDB's
 * gzip reader has stopped early without an error on some layouts of gzip members (0e6f089):
 * this is the net for one not yet known. Answers of several tasks are not checked: some of
 * their tasks may be picked from newer answers. A callback body holding tasks besides the
 * one it was accepted for may be flagged; the plain-text reload then gives the same rows.
 */
async function readShort(wh: Warehouse, firstRowIds: ReadonlyMap<TablePlan, string>, files: readonly string[], selected: string): Promise<string[]> {
  const short = new Set<string>();
  const inBatch = `file IN (SELECT unnest(${sqlList(files)}::VARCHAR[]))`;
  for (const [t, first] of firstRowIds) {
    const byTask = t.columns.some((c) => c.name === 'task_id');
    if (!byTask && !t.columns.some((c) => c.name === 'call_id')) continue;
    const holds = t.rows === '' ? '' : ` AND list_contains(shape, ${sqlString(`${t.rows}:o`)})`;
    // A task that gave rows gave the first of some list at the rows level (index 0; a body is read
    // whole or not at all): one row per list is looked at, not every item (4 to 7 ms against 7
    // to 12 at 50,000 SERP items).
    const firstOfList = t.rows === '' ? undefined : t.columns.find((c) => c.index === t.rows);
    const only = firstOfList ? ` AND ${ident(firstOfList.name)} = 0` : '';
    const got = byTask
      ? `SELECT call_id FROM _pick WHERE task_id IN (SELECT task_id FROM ${ident(t.name)} WHERE rowid >= ${first}${only})`
      : `SELECT call_id FROM ${ident(t.name)} WHERE rowid >= ${first} AND call_id IS NOT NULL`;
    // Answers of one task: the rows of a task picked from a newer answer are not this one's to give.
    const picked = byTask ? ' AND len(task_ids) = 1 AND call_id IN (SELECT call_id FROM _pick)' : '';
    const rows = await wh.all<{ file: string }>(
      `SELECT DISTINCT file FROM raw_responses WHERE ${selected} AND parsed AND ${inBatch}${holds}${picked} AND call_id NOT IN (${got})`,
    );
    for (const r of rows) short.add(r.file);
  }
  return [...short].sort();
}

/** Gzip bytes of landed files inflated and read together by a load (about 1.5 GB of plain SERP NDJSON). */
const LOAD_BATCH_BYTES = 128 << 20;

/**
 * A batch of less gzip than this (a night's load of 250 to 500 SERP tasks is about 4 MB) is
 * read by DuckDB straight from the landed files, which each table then inflates again, in
 * pieces of about 1 MiB of bodies (intoPieces). At 50,000 SERP items that took no more time than
 * inflating once into a scratch file, and 300 MB peak RSS against 430 to 450: DuckDB parses a
 * file's read buffer of bodies at once, and Node's inflate leaves the plain text behind as
 * buffers for the garbage collector. Larger batches are inflated once, on several threads,
 * unless they hold small files only (SMALL_FILE_BYTES).
 */
const READ_DIRECT_BELOW = 8 << 20;

/**
 * A landed file of less gzip than this is small: one answer, or a few landed together. A batch of
 * small files only (a big account's night before compaction: 10,000 one-answer files of about 8
 * KB for a million SERP items) is read directly however large. Inflated, with a stream and a
 * pipeline per file, that night's load took 13.5 to 14.8 s (21.6 to 24.1 s of CPU) in four loads
 * and 25.7 s (42.6 s) in a fifth, 6 to 18 s of it inflating; read directly, 7.1 to 9.1 s (13.5
 * to 16.6 s of CPU), its files joined into pieces in under a second. Peak RSS 1,307 to 1,363 MB
 * against 1,336 to 1,469.
 */
const SMALL_FILE_BYTES = 1 << 20;

/**
 * Whether a batch is read as gzip straight from its landed files (in pieces, intoPieces) rather
 * than inflated into one plain scratch file: when it holds less than `readDirectBelow` bytes, or
 * only small files. Never when `readDirectBelow` is 0 (the reload from plain text after a short
 * read, ShortRead).
 */
export function readsDirect(batch: readonly { size: number }[], readDirectBelow: number): boolean {
  if (readDirectBelow <= 0) return false;
  return batch.reduce((s, { size }) => s + size, 0) < readDirectBelow || batch.every(({ size }) => size < SMALL_FILE_BYTES);
}

function depth(rows: string): number {
  return rows.split('[]').length - 1;
}

/**
 * The selection's landed responses by kind, in one look (it was three, each with DuckDB's cost
 * of a statement): per kind its parsed files, calls and unparsed call ids (the bodies that are
 * not JSON, kind _malformed, by id to report); how many index rows its files hold in all,
 * selected or not, with their `received_at` range; and `selected`, the condition on
 * `raw_responses` for the selection's rows. DuckDB aggregates by (kind, file) and then by kind,
 * so that a large load does not carry each call through JavaScript, with plain aggregates only:
 * the aggregate with `list(DISTINCT file ORDER BY file)` and an ordered list of the unparsed ids
 * took 6.9 ms of DuckDB's profile for a night's 487 answers, so the files are sorted here, and
 * the unparsed ids (rare) are asked for apart, only when there are some.
 *
 * `selected` and each kind's files carry `AND received_at BETWEEN …` bounding the rows they
 * match: implied by the filter that chose them, so it changes no result, but DuckDB then skips
 * the row groups of other nights by their zone maps instead of reading a year of the index's
 * list columns (a load's selection read 40 MB and 0.57 s of `raw_responses` at 1,000 keywords x
 * 365 nights; 1 MB and 0.04 s with it). Empty when some matched row has no `received_at`.
 */
async function lookAtSelection(wh: Warehouse): Promise<{ kinds: (Landed & { unparsed: string[] })[]; selected: string }> {
  type Row = {
    kind: string;
    files: string[];
    calls: number;
    bad: number;
    r0: string | null;
    c0: string | null;
    n: number | null;
    flo: string | null;
    fhi: string | null;
    fundated: number | null;
    lo: string | null;
    hi: string | null;
    undated: number;
  };
  const rows = await wh.all<Row>(
    `WITH kfiles AS (
       SELECT kind, file, count(*) FILTER (WHERE parsed) AS calls, count(*) FILTER (WHERE NOT parsed) AS bad,
              min(received_at) FILTER (WHERE parsed) AS r0, min(call_id) FILTER (WHERE parsed) AS c0,
              min(received_at) AS lo, max(received_at) AS hi, count(*) FILTER (WHERE received_at IS NULL) AS undated
       FROM _sel GROUP BY kind, file),
     -- All the index rows of the files read (selected or not); kinds are joined on (kind, file)
     -- pairs, not by list_contains on each kind's list of files: that is a nested loop, 0.3 s for
     -- one kind of 10,000 one-answer files.
     f AS (
       SELECT file, min(received_at) AS flo, max(received_at) AS fhi, count(*) FILTER (WHERE received_at IS NULL) AS fundated, count(*) AS n
       FROM raw_responses WHERE file IN (SELECT file FROM kfiles WHERE calls > 0 AND kind <> '${CALLS_KIND}') GROUP BY file)
     SELECT kind, coalesce(list(kfiles.file) FILTER (WHERE calls > 0), []) AS files, sum(calls)::INT AS calls, sum(bad)::INT AS bad,
            epoch_us(min(r0))::VARCHAR AS r0, min(c0) AS c0, sum(n)::INT AS n, epoch_us(min(flo))::VARCHAR AS flo,
            epoch_us(max(fhi))::VARCHAR AS fhi, sum(fundated)::INT AS fundated, epoch_us(min(lo))::VARCHAR AS lo,
            epoch_us(max(hi))::VARCHAR AS hi, sum(undated)::INT AS undated
     FROM kfiles LEFT JOIN f ON f.file = kfiles.file AND kfiles.calls > 0 AND kfiles.kind <> '${CALLS_KIND}' GROUP BY kind`,
  );
  // The selection's range is over all its rows, calls (\`_calls\`) included.
  const selRange = { lo: minOf(rows.map((r) => r.lo)), hi: maxOf(rows.map((r) => r.hi)), undated: rows.reduce((s, r) => s + r.undated, 0) };
  const unparsed = new Map<string, string[]>();
  if (rows.some((r) => r.kind !== CALLS_KIND && r.bad > 0)) {
    for (const u of await wh.all<{ kind: string; ids: string[] }>(
      `SELECT kind, list(call_id ORDER BY received_at, call_id) AS ids FROM _sel WHERE NOT parsed AND kind <> '${CALLS_KIND}' GROUP BY kind`,
    )) {
      unparsed.set(u.kind, u.ids);
    }
  }
  // In the order of their first parsed response (received, then call id); kinds with none last.
  const order = (a: Row, b: Row) => cmpNullsLast(a.r0 === null ? null : BigInt(a.r0), b.r0 === null ? null : BigInt(b.r0)) || cmpNullsLast(a.c0, b.c0) || cmp(a.kind, b.kind);
  const kinds = rows
    .filter((r) => r.kind !== CALLS_KIND)
    .sort(order)
    .map((r) => ({
      kind: r.kind,
      files: [...r.files].sort(cmp),
      calls: r.calls,
      unparsed: unparsed.get(r.kind) ?? [],
      inFiles: { rows: r.n ?? 0, received: receivedWithin({ lo: r.flo, hi: r.fhi, undated: r.fundated ?? 0 }) },
    }));
  return { kinds, selected: `call_id IN (SELECT call_id FROM _sel)${receivedWithin(rows.length > 0 ? selRange : undefined)}` };
}

function cmp<T extends string | bigint>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmpNullsLast<T extends string | bigint>(a: T | null, b: T | null): number {
  return a === null ? (b === null ? 0 : 1) : b === null ? -1 : cmp(a, b);
}

/** The least (greatest) of microsecond counts given as digits; null when there is none. */
function minOf(xs: readonly (string | null)[]): string | null {
  return xs.reduce<string | null>((m, x) => (x !== null && (m === null || BigInt(x) < BigInt(m)) ? x : m), null);
}

function maxOf(xs: readonly (string | null)[]): string | null {
  return xs.reduce<string | null>((m, x) => (x !== null && (m === null || BigInt(x) > BigInt(m)) ? x : m), null);
}

/** {@link receivedBetween} for a range DuckDB gave (microseconds as digits); empty when some row has no `received_at`. */
function receivedWithin(r: { lo: string | null; hi: string | null; undated: number } | null | undefined): string {
  if (!r || r.lo === null || r.hi === null || r.undated > 0) return '';
  return receivedBetween(BigInt(r.lo), BigInt(r.hi));
}

/** `_sel`: the selection's raw index rows (call id, received_at, kind, file, parsed). */
async function selectCalls(wh: Warehouse, sel: LoadSelection): Promise<void> {
  if ('taskIds' in sel) {
    // A hash join on the index's unnested task ids: list_has_any against each of a year's rows
    // cost a second per load at 1,000 keywords x 365 nights; this costs a tenth of that.
    await wh.run(
      `CREATE OR REPLACE TEMP TABLE _sel AS SELECT DISTINCT call_id, received_at, kind, file, parsed FROM (SELECT call_id, received_at, kind, file, parsed, unnest(task_ids) AS task_id FROM raw_responses${await plannedSince(wh, sel.taskIds)})
       WHERE task_id IN (SELECT unnest(${sqlList(sel.taskIds)}::VARCHAR[]))`,
    );
  } else if ('callIds' in sel) {
    await wh.run(
      `CREATE OR REPLACE TEMP TABLE _sel AS SELECT call_id, received_at, kind, file, parsed FROM raw_responses WHERE call_id IN (SELECT unnest(${sqlList(sel.callIds)}::VARCHAR[]))`,
    );
  } else {
    const kinds = sel.kinds ? ` WHERE kind IN (SELECT unnest(${sqlList(sel.kinds)}::VARCHAR[]))` : '';
    await wh.run(`CREATE OR REPLACE TEMP TABLE _sel AS SELECT call_id, received_at, kind, file, parsed FROM raw_responses${kinds}`);
  }
}

/**
 * ` WHERE received_at >= …` for the raw index rows that may hold the tasks `taskIds`: a day
 * before the earliest of them was planned. A task is recorded `planned` before the POST that
 * creates its id (RunStore.recordPlanned), and both times come from the run's clock, so no
 * response naming it was received earlier; the day is for a clock set back in between. DuckDB
 * then skips the index's row groups of older nights by their zone maps, instead of unnesting
 * the task ids of a year of responses at each load. At 1,000 keywords x 365 nights that look
 * read 21 MB of the index and took 35 to 70 ms; bounded, 2 MB and 7 ms, after 20 to 30 ms and
 * 6 MB for the plan times (cold; the load reads the tasks' ids anyway). The night's peak RSS
 * did not move measurably (bench/night.ts: 543 to 647 MB in 14 runs after, 576 to 649 in 8
 * before): the ingest's garbage varies by more than that. Empty, so every row is read,
 * when some task is not in the tasks table with a plan time (raw files loaded without their
 * run's state) or some index row has no \`received_at\`.
 */
async function plannedSince(wh: Warehouse, taskIds: readonly string[]): Promise<string> {
  const ids = [...new Set(taskIds)];
  if (ids.length === 0) return '';
  const [b] = await wh.all<{ n: number; lo: string | null; undated: number }>(
    `SELECT count(DISTINCT task_id)::INT AS n, epoch_us(min(planned_at))::VARCHAR AS lo, (SELECT count(*) FROM raw_responses WHERE received_at IS NULL)::INT AS undated
     FROM tasks WHERE task_id IN (SELECT unnest(${sqlList(ids)}::VARCHAR[])) AND planned_at IS NOT NULL`,
  );
  if (!b || b.lo === null || b.n < ids.length || b.undated > 0) return '';
  return ` WHERE received_at >= make_timestamptz(${BigInt(b.lo) - 86_400_000_000n})`;
}

/**
 * The newest selected response of each task, from the raw index's task ids. Rows of a task
 * are loaded only from its pick: never from another body that merely holds the task (a
 * callback is indexed with the one task it was accepted for, whatever else its body says),
 * and never from an older response.
 */
async function pickNewest(wh: Warehouse, selected: string): Promise<void> {
  await wh.run(`CREATE OR REPLACE TEMP TABLE _pick AS
    SELECT call_id, task_id FROM (
      SELECT call_id, unnest(task_ids) AS task_id, received_at FROM raw_responses WHERE ${selected} AND parsed
    ) QUALIFY row_number() OVER (PARTITION BY task_id ORDER BY received_at DESC, call_id DESC) = 1`);
}

/** The report's `picked`, from `_pick` (a task is in it once). */
async function readPicks(wh: Warehouse, report: LoadReport): Promise<void> {
  report.picked.clear();
  for (const r of await wh.all<{ t: string; c: string }>(`SELECT task_id AS t, call_id AS c FROM _pick`)) report.picked.set(r.t, r.c);
}

/**
 * Files the load cannot read whole (a torn gzip, bytes that are not NDJSON), each tried alone as
 * the load reads it; and files it reads only with a larger `maximum_object_size` (`large`: an
 * answer over about 32 MB), with the setting each needs.
 */
async function unreadable(wh: Warehouse, files: string[]): Promise<{ bad: { file: string; error: string }[]; large: Map<string, number> }> {
  const bad: { file: string; error: string }[] = [];
  const large = new Map<string, number>();
  const plain = scratchFile(wh.dir);
  for (const f of files) {
    // Empty: Node inflates it to nothing, but DuckDB's gzip reader refuses it (not a gzip stream).
    if ((await stat(join(wh.dir, f)).catch(() => undefined))?.size === 0) {
      bad.push({ file: f, error: 'the file is empty (0 bytes)' });
      continue;
    }
    const read = (bytes?: number) => wh.all(`SELECT count(*) FROM read_json(${sqlList([plain])}, columns = {call_id: 'VARCHAR', body: 'JSON'}, format = 'newline_delimited'${objectSizeOption(bytes)})`);
    try {
      await inflate([join(wh.dir, f)], plain);
      try {
        await read();
      } catch (err) {
        if (!OBJECT_TOO_LARGE.test((err as Error).message)) throw err;
        const longest = await longestLine(plain);
        const bytes = objectSizeFor(longest);
        if (bytes === undefined) throw new Error(`an answer of ${longest} bytes, past the ${MAX_OBJECT_BYTES} bytes the load reads`);
        await read(bytes);
        large.set(f, bytes);
      }
    } catch (err) {
      bad.push({ file: f, error: (err as Error).message.split('\n')[0]! });
    } finally {
      await removeInflated(plain);
    }
  }
  return { bad, large };
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
 * table, which read the task ids of a year of rows (0.4 s and 100 MB of serp_items at 1,000
 * keywords x 365 nights).
 */
async function picksMayHaveRows(wh: Warehouse): Promise<boolean> {
  // tasks RIGHT JOIN _pick, not _pick LEFT JOIN tasks: with the inserts' optimizer off (insertRows),
  // DuckDB builds on the right side as written, which must be the night's picks, not a year of
  // tasks (43 ms against 8 for 500 picks and 400,000 tasks).
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
 * `_pick`, and probed it with the picks: at 50,000 SERP items that join took 0.14 s, a third of
 * the insert, and about 40 MB of peak RSS (bench/run.ts). Off, each join builds on its right side
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
