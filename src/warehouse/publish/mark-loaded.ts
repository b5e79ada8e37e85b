import { ident, sqlString } from '../columns.js';
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
 * a temp table (which doubled the load's writes and memory: bench/run.ts). Returns the rows added,
 * and the row id (as digits) from which they were appended.
 */
export async function insertMarked(wh: Warehouse, t: MarkedTable, select: string): Promise<{ rows: number; firstRowId: string }> {
  const p = partitioningOf({ partitionBy: t.partitionBy, columns: t.columns.map((c) => c.name) });
  // As text: rows appended in an open transaction have ids from 2^55 on, past what a double holds exactly.
  const [first] = await wh.all<{ next: string }>(`SELECT (coalesce(max(rowid), -1) + 1)::VARCHAR AS next FROM ${ident(t.name)}`);
  const firstRowId = first?.next ?? '0';
  if (!/^\d+$/.test(firstRowId)) throw new Error(`unexpected row id ${firstRowId} in ${t.name}`);
  const n = Number((await wh.db.run(`INSERT INTO ${ident(t.name)} BY NAME ${select}`)).rowsChanged);
  if (p && n > 0) {
    await wh.run(
      `INSERT INTO publish_dirty SELECT DISTINCT ${sqlString(t.name)}, ${p.expr}, false, t.${ident(t.replaceKey)}::VARCHAR
       FROM ${ident(t.name)} AS t WHERE rowid >= ${firstRowId}`,
    );
  }
  return { rows: n, firstRowId };
}
