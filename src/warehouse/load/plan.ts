import { sqlList, sqlString } from '../columns.js';
import { kindSpec } from '../normalize/result-tables/index.js';
import { mergeShapes, type ShapeMap } from '../normalize/shape.js';
import { envelopeStructure, envelopeType, selectRowsFrom } from '../normalize/sql-build.js';
import { planKind, under, type KindPlan, type StoredColumn, type TablePlan } from '../normalize/table-plan.js';
import type { Warehouse } from '../warehouse.js';
import type { Landed } from './select.js';

/** One kind's part of a load. */
export interface Work {
  plan: KindPlan;
  files: string[];
  /**
   * The plan's tables, deepest rows first (items before their results): the largest read then
   * starts from a clean slate, a lower peak of memory for SERP than the other order.
   */
  reads: TableRead[];
  /** `AND received_at BETWEEN …` of the files' index rows (receivedWithin). */
  received: string;
  /**
   * The condition on a raw index row that its file is one of the kind's planned files, by the
   * selection (`_sel`) rather than by a list of names, and how many files that is: a batch of
   * all of them uses it (filesIn).
   */
  planned: { files: number; inFiles: string };
}

/** How a load reads one table's rows. */
export interface TableRead {
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
 * One kind's part of a load, planned from one look at the raw index: the shapes of its files'
 * bodies, whether every body has a head, and the columns stored for the kind; then each table's
 * read (its SELECT, and whether it reads the heads).
 */
export async function planLoad(wh: Warehouse, { kind, files, calls, inFiles: { rows: n, received } }: Landed): Promise<Work> {
  // The shapes of every body in the files, not only the selected ones: DuckDB reads whole
  // files, so a compacted segment's other bodies must fit the explicit types too. With them,
  // in the same look: whether every body of the files has a head (raw_heads), and the
  // columns stored for the kind.
  // The kind's files are those of its parsed selected answers (lookAtSelection): named by that
  // condition on \`_sel\`, not by a list of their names, which DuckDB parses, binds and folds at
  // each statement (a night's 487 names cost about 5 ms of CPU more per statement).
  const inFiles = `file IN (SELECT file FROM _sel WHERE kind = ${sqlString(kind)} AND parsed)`;
  const parsedInFiles = `${inFiles} AND parsed${received}`;
  // Three one-row subqueries in FROM, not scalar subqueries in SELECT: DuckDB wraps each of those
  // in a check that it gave one row (an aggregate of its own). The kind is
  // written in, not bound: a statement with parameters is three calls into DuckDB (extract,
  // prepare, run), each of which waits for the main thread between; one without is one.
  const [look] = await wh.all<{ shape: string[]; headless: number; stored: StoredColumn[] }>(
    `SELECT a.shape, b.headless, c.stored
     FROM (SELECT coalesce(list(DISTINCT s), []) AS shape FROM (SELECT unnest(shape) AS s FROM raw_responses WHERE ${parsedInFiles})) AS a,
          (SELECT count(*)::INT AS headless FROM raw_responses WHERE ${parsedInFiles} AND call_id NOT IN (SELECT call_id FROM raw_heads WHERE true${received})) AS b,
          (SELECT coalesce(list({table_name: table_name, column_name: column_name, result_kind: result_kind, spec: spec::VARCHAR} ORDER BY table_name, position), []) AS stored
           FROM schema_columns WHERE result_kind = ${sqlString(kind)}) AS c`,
  );
  const { plan, reads } = planned(kind, look!, n > calls);
  return { plan, files, reads, received, planned: { files: files.length, inFiles } };
}

/**
 * A kind's plan and its tables' reads for what a look at the raw index found: the same for every
 * load whose bodies have the same shapes against the same stored columns (a night's loads of one
 * kind, as a rule), so each process builds them once per such look (`PLANS`) and not at every
 * load. Nothing mutates them once built. `others`: the files hold bodies besides the selected
 * ones, whose rows the reads leave out.
 */
function planned(kind: string, look: { shape: string[]; headless: number; stored: StoredColumn[] }, others: boolean): Pick<Work, 'plan' | 'reads'> {
  const key = JSON.stringify([kind, [...look.shape].sort(), look.stored, look.headless === 0, others]);
  const hit = PLANS.get(key);
  if (hit) {
    // Most recently used last, so the oldest goes first when the cache is full.
    PLANS.delete(key);
    PLANS.set(key, hit);
    return hit;
  }
  const shape = mergeShapes(look.shape);
  // Some body is a `/v3` envelope (`tasks[]`).
  const envelope = shape.get('tasks')?.has('a') ?? false;
  const plan = planKind(kindSpec(kind, envelope), look.stored, shape);
  // The result-level tables read the bodies' heads when every body of the files has one.
  const fromHeads = look.headless === 0 ? headTables(plan, shape) : new Set<TablePlan>();
  const select = { ...(others ? { where: 'call_id IN (SELECT call_id FROM _sel)' } : {}), pickTable: '_pick' };
  const reads = [...plan.tables]
    .sort((a, b) => depth(b.rows) - depth(a.rows))
    .map((t): TableRead => {
      const heads = fromHeads.has(t);
      const type = sqlString(heads ? envelopeStructure([t]) : envelopeType([t]));
      return { t, heads, type, select: selectRowsFrom(t, select), list: listOf(t) };
    });
  const out = { plan, reads };
  PLANS.set(key, out);
  if (PLANS.size > PLANS_KEPT) PLANS.delete(PLANS.keys().next().value!);
  return out;
}

/** Plans built in this process, by what their look found (planned): the most recently used last. */
const PLANS = new Map<string, Pick<Work, 'plan' | 'reads'>>();
const PLANS_KEPT = 32;

/**
 * The condition on a raw index row that its file is one of `files` (a batch of the kind's): by
 * the selection when they are all of the kind's planned files, else by their names. The files
 * the load skips (unreadable) leave fewer than planned, and a batch of all of them is one batch.
 */
export function filesIn(work: Pick<Work, 'planned'>, files: readonly string[]): string {
  return files.length === work.planned.files ? work.planned.inFiles : `file IN (SELECT unnest(${sqlList(files)}::VARCHAR[]))`;
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

function depth(rows: string): number {
  return rows.split('[]').length - 1;
}
