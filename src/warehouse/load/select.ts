import { receivedBetween, sqlList } from '../columns.js';
import { CALLS_KIND } from '../normalize/result-tables/index.js';
import type { Warehouse } from '../warehouse.js';

/*
 * The load's first step: which landed responses it reads. `_sel` holds the selection's raw index
 * rows, `_pick` each task's newest selected answer; both are temp tables the plan and the commit
 * read.
 */

/** Which landed responses to load. */
export type LoadSelection = { taskIds: readonly string[] } | { callIds: readonly string[] } | { kinds?: readonly string[]; all: true };

/** The selected, parsed responses of one kind. */
export interface Landed {
  kind: string;
  files: string[];
  calls: number;
  /** All the index rows of `files` (selected or not): how many, and `AND received_at BETWEEN …` bounding them. */
  inFiles: { rows: number; received: string };
}

/**
 * The selection's landed responses by kind, in one look (each statement has DuckDB's cost of a
 * statement): per kind its parsed files, calls and unparsed call ids (the bodies that are
 * not JSON, kind _malformed, by id to report); how many index rows its files hold in all,
 * selected or not, with their `received_at` range; and `selected`, the condition on
 * `raw_responses` for the selection's rows. DuckDB aggregates by (kind, file) and then by kind,
 * so that a large load does not carry each call through JavaScript, with plain aggregates only
 * (ordered lists cost DuckDB more than sorting here: docs/performance.md): the files are sorted
 * here, and the unparsed ids (rare) are asked for apart, only when there are some.
 *
 * `selected` and each kind's files carry `AND received_at BETWEEN …` bounding the rows they
 * match: implied by the filter that chose them, so it changes no result, but DuckDB then skips
 * the row groups of other nights by their zone maps instead of reading a year of the index's
 * list columns. Empty when some matched row has no `received_at`.
 */
export async function lookAtSelection(wh: Warehouse): Promise<{ kinds: (Landed & { unparsed: string[] })[]; selected: string }> {
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
     -- one kind of 10,000 one-answer files. The join's one condition is an equality (the file, or
     -- null for the pairs not read), so DuckDB hashes it: with the other conditions beside it in
     -- ON, it joined by a nested loop (7 to 16 ms for a night's 487 files, 4 to 9 with the hash).
     f AS (
       SELECT file, min(received_at) AS flo, max(received_at) AS fhi, count(*) FILTER (WHERE received_at IS NULL) AS fundated, count(*) AS n
       FROM raw_responses WHERE file IN (SELECT file FROM kfiles WHERE calls > 0 AND kind <> '${CALLS_KIND}') GROUP BY file)
     SELECT kind, coalesce(list(kfiles.file) FILTER (WHERE calls > 0), []) AS files, sum(calls)::INT AS calls, sum(bad)::INT AS bad,
            epoch_us(min(r0))::VARCHAR AS r0, min(c0) AS c0, sum(n)::INT AS n, epoch_us(min(flo))::VARCHAR AS flo,
            epoch_us(max(fhi))::VARCHAR AS fhi, sum(fundated)::INT AS fundated, epoch_us(min(lo))::VARCHAR AS lo,
            epoch_us(max(hi))::VARCHAR AS hi, sum(undated)::INT AS undated
     FROM kfiles LEFT JOIN f ON f.file = CASE WHEN kfiles.calls > 0 AND kfiles.kind <> '${CALLS_KIND}' THEN kfiles.file END GROUP BY kind`,
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

/**
 * `_sel`: the selection's raw index rows (call id, received_at, kind, file, parsed, task ids). The
 * task ids come along so that the pick (pickNewest) reads this small table, not the raw index again.
 */
export async function selectCalls(wh: Warehouse, sel: LoadSelection): Promise<void> {
  const cols = 'call_id, received_at, kind, file, parsed, task_ids';
  if ('taskIds' in sel) {
    // A hash join on the index's unnested task ids: list_has_any against each of a year's rows
    // cost a second per load at 1,000 keywords x 365 nights; this costs a tenth of that.
    await wh.run(
      `CREATE OR REPLACE TEMP TABLE _sel AS SELECT DISTINCT ${cols} FROM (SELECT ${cols}, unnest(task_ids) AS task_id FROM raw_responses${await plannedSince(wh, sel.taskIds)})
       WHERE task_id IN (SELECT unnest(${sqlList(sel.taskIds)}::VARCHAR[]))`,
    );
  } else if ('callIds' in sel) {
    await wh.run(`CREATE OR REPLACE TEMP TABLE _sel AS SELECT ${cols} FROM raw_responses WHERE call_id IN (SELECT unnest(${sqlList(sel.callIds)}::VARCHAR[]))`);
  } else {
    const kinds = sel.kinds ? ` WHERE kind IN (SELECT unnest(${sqlList(sel.kinds)}::VARCHAR[]))` : '';
    await wh.run(`CREATE OR REPLACE TEMP TABLE _sel AS SELECT ${cols} FROM raw_responses${kinds}`);
  }
}

/**
 * ` WHERE received_at >= …` for the raw index rows that may hold the tasks `taskIds`: a day
 * before the earliest of them was planned. A task is recorded `planned` before the POST that
 * creates its id (RunStore.recordPlanned), and both times come from the run's clock, so no
 * response naming it was received earlier; the day is for a clock set back in between. DuckDB
 * then skips the index's row groups of older nights by their zone maps, instead of unnesting
 * the task ids of a year of responses at each load (docs/performance.md). Empty, so every row is read,
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
 * The newest selected response of each task, from the task ids of the selection's index rows
 * (`_sel`, which holds every row of the raw index the load's `selected` condition matches:
 * call ids are the index's key), only those that also meet `also` (a condition on `_sel`'s rows).
 * Rows of a task are loaded only from its pick: never from another body that merely holds the
 * task (a callback is indexed with the one task it was accepted for, whatever else its body
 * says), and never from an older response.
 */
export async function pickNewest(wh: Warehouse, also = ''): Promise<void> {
  await wh.run(`CREATE OR REPLACE TEMP TABLE _pick AS
    SELECT call_id, task_id FROM (
      SELECT call_id, unnest(task_ids) AS task_id, received_at FROM _sel WHERE parsed${also ? ` AND ${also}` : ''}
    ) QUALIFY row_number() OVER (PARTITION BY task_id ORDER BY received_at DESC, call_id DESC) = 1`);
}

/** The report's `picked`, from `_pick` (a task is in it once). */
export async function readPicks(wh: Warehouse, picked: Map<string, string>): Promise<void> {
  picked.clear();
  for (const r of await wh.all<{ t: string; c: string }>(`SELECT task_id AS t, call_id AS c FROM _pick`)) picked.set(r.t, r.c);
}
