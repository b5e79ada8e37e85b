import { ident } from '../columns.js';
import type { Warehouse } from '../warehouse.js';
import { partitioningOf } from './partitioning.js';

/** A data table as the loader sees it: enough to know its partitions and replace key. */
export interface MarkedTable {
  name: string;
  partitionBy?: string | undefined;
  replaceKey: string;
  columns: readonly { name: string }[];
}

function quote(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/**
 * Marks the partitions holding the rows a replace is about to delete (a re-parse, a
 * reload): the next publish rewrites them whole. Call it in the load's transaction, before
 * the DELETE. Tables with no date of their own are compared whole at publish instead.
 */
export async function markReplaced(wh: Warehouse, t: MarkedTable, keyFilter: string): Promise<void> {
  const p = partitioningOf({ partitionBy: t.partitionBy, columns: t.columns.map((c) => c.name) });
  if (!p) return;
  await wh.run(`INSERT INTO publish_dirty SELECT DISTINCT ${quote(t.name)}, ${p.expr}, true, NULL FROM ${ident(t.name)} AS t WHERE ${keyFilter}`);
}

/**
 * Inserts the rows of `select` and records, in the same transaction, the partition and
 * replace key of each: the next publish writes exactly these rows as new files, reading
 * the night's rows and never the history. The rows pass through a temp table so their
 * partitions are read from the batch, not from the (year-long) table. Returns the rows added.
 */
export async function insertMarked(wh: Warehouse, t: MarkedTable, select: string): Promise<number> {
  const p = partitioningOf({ partitionBy: t.partitionBy, columns: t.columns.map((c) => c.name) });
  if (!p) return Number((await wh.db.run(`INSERT INTO ${ident(t.name)} BY NAME ${select}`)).rowsChanged);
  await wh.run(`CREATE OR REPLACE TEMP TABLE _publish_rows AS ${select}`);
  try {
    const n = Number((await wh.db.run(`INSERT INTO ${ident(t.name)} BY NAME SELECT * FROM _publish_rows`)).rowsChanged);
    await wh.run(`INSERT INTO publish_dirty SELECT DISTINCT ${quote(t.name)}, ${p.expr}, false, t.${ident(t.replaceKey)}::VARCHAR FROM _publish_rows AS t`);
    return n;
  } finally {
    await wh.run(`DROP TABLE IF EXISTS _publish_rows`);
  }
}
