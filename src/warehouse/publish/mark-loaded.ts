import { ident, oneRowOf, sqlString } from '../columns.js';
import type { Warehouse } from '../warehouse.js';
import { partitioningOf } from './partitioning.js';

/** A data table as the loader sees it: enough to know its partitions and replace key. */
export interface MarkedTable {
  name: string;
  partitionBy?: string | undefined;
  replaceKey: string;
  columns: readonly { name: string }[];
}

/**
 * Marks the partitions holding the rows a replace is about to delete (a re-parse, a
 * reload): the next publish rewrites them whole. Call it in the load's transaction, before
 * the DELETE. Tables with no date of their own are compared whole at publish instead.
 */
export async function markReplaced(wh: Warehouse, t: MarkedTable, keyFilter: string): Promise<void> {
  const p = partitioningOf({ partitionBy: t.partitionBy, columns: t.columns.map((c) => c.name) });
  if (!p) return;
  await wh.run(`INSERT INTO publish_dirty SELECT DISTINCT ${sqlString(t.name)}, ${p.expr}, true, NULL FROM ${ident(t.name)} AS t WHERE ${keyFilter}`);
}

/**
 * Inserts the rows of `select` and records, in the same transaction, the partition and
 * replace key of each: the next publish writes exactly these rows as new files, reading
 * the night's rows and never the history. The new rows are found by their row ids (rows
 * appended get ids past every row the table held, committed or appended earlier in this
 * transaction), so they are read back from the rows just written and never copied through
 * a temp table (which would double the load's writes and memory). `firstRowId` is the
 * table's next row id (nextRowIdsOf), read in this transaction with no row appended to the table
 * since. `list`: the rows are the items of lists (each given whole, its first item at index 0),
 * and these columns hold one value for all the items of a list (a SERP item's check date and task
 * id are its result's): when the partition and the replace key are among them, the marks are read
 * from the first item of each list, one row per list instead of every item. Returns the rows added, and the row id (as digits) from which they were appended.
 */
export async function insertMarked(
  wh: Warehouse,
  t: MarkedTable,
  select: string,
  firstRowId: string,
  list?: { index: string; sameInList: ReadonlySet<string> },
): Promise<{ rows: number; firstRowId: string }> {
  const p = partitioningOf({ partitionBy: t.partitionBy, columns: t.columns.map((c) => c.name) });
  const n = Number((await wh.db.run(`INSERT INTO ${ident(t.name)} BY NAME ${select}`)).rowsChanged);
  if (p && n > 0) {
    const firstOfLists = list && [...p.columns, t.replaceKey].every((c) => list.sameInList.has(c)) ? ` AND t.${ident(list.index)} = 0` : '';
    await wh.run(
      `INSERT INTO publish_dirty SELECT DISTINCT ${sqlString(t.name)}, ${p.expr}, false, t.${ident(t.replaceKey)}::VARCHAR
       FROM ${ident(t.name)} AS t WHERE rowid >= ${firstRowId}${firstOfLists}`,
    );
  }
  return { rows: n, firstRowId };
}

/**
 * The row id the next row appended to each table gets (as digits), for all of them in one
 * statement (not one per table, each on the load's path). As text: rows appended in an
 * open transaction have ids from 2^55 on, past what a double holds exactly.
 */
export async function nextRowIdsOf(wh: Warehouse, tables: readonly { name: string }[]): Promise<Map<string, string>> {
  const names = [...new Set(tables.map((t) => t.name))];
  if (names.length === 0) return new Map();
  const [row] = await wh.all<Record<string, string>>(oneRowOf(names.map((n, i) => `SELECT (coalesce(max(rowid), -1) + 1)::VARCHAR AS t${i} FROM ${ident(n)}`)));
  return new Map(
    names.map((n, i) => {
      const next = row?.[`t${i}`] ?? '';
      if (!/^\d+$/.test(next)) throw new Error(`unexpected row id ${next} in ${n}`);
      return [n, next];
    }),
  );
}
