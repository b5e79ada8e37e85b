import type { Table } from 'apache-arrow';
import type { TableSpec } from './columns.js';
import { appendArrow } from './arrow-to-duckdb.js';
import type { Warehouse } from './warehouse.js';

export interface TableBatch {
  spec: TableSpec;
  table: Table;
}

/**
 * Loads Arrow batches idempotently: each batch is appended to a temp staging table, then
 * one transaction deletes the target rows with the same keys (only when the parent table,
 * the first batch, already holds some of them), inserts the staged rows and
 * runs `alsoInTransaction` (the task's "collected" mark), so a task's rows and its mark
 * commit together and loading the same body twice changes nothing.
 */
export async function loadIdempotent(
  wh: Warehouse,
  batches: TableBatch[],
  alsoInTransaction: () => Promise<void>,
): Promise<number> {
  for (const { spec } of batches) {
    const stage = stageName(spec);
    await wh.run(`CREATE TEMP TABLE IF NOT EXISTS ${stage} AS SELECT * FROM ${spec.name} LIMIT 0`);
    await wh.run(`DELETE FROM ${stage}`);
  }
  for (const { spec, table } of batches) {
    if (table.numRows === 0) continue;
    const appender = await wh.db.createAppender(stageName(spec), 'main', 'temp');
    try {
      appendArrow(appender, spec, table);
    } finally {
      appender.closeSync();
    }
  }
  let rows = 0;
  const reload = await alreadyLoaded(wh, batches[0]?.spec);
  await wh.transaction(async () => {
    for (const { spec, table } of batches) {
      const stage = stageName(spec);
      if (reload) {
        const keys = spec.replaceKey ? [spec.replaceKey] : spec.columns.filter((c) => c.key).map((c) => c.name);
        const on = keys.map((k) => `t.${k} = s.${k}`).join(' AND ');
        await wh.run(`DELETE FROM ${spec.name} t WHERE EXISTS (SELECT 1 FROM ${stage} s WHERE ${on})`);
      }
      await wh.run(`INSERT INTO ${spec.name} SELECT * FROM ${stage}`);
      rows += table.numRows;
    }
    await alsoInTransaction();
  });
  return rows;
}

/**
 * Whether any staged key is already in the first (parent) table. The batches of one load
 * always commit together, so when the parent holds none of the keys, neither does any
 * child table, and the deletes (a scan of each big table) can be skipped.
 */
async function alreadyLoaded(wh: Warehouse, parent: TableSpec | undefined): Promise<boolean> {
  if (!parent) return false;
  const key = parent.replaceKey ?? parent.columns.find((c) => c.key)?.name;
  if (!key) return true;
  const rows = await wh.all(`SELECT 1 FROM ${parent.name} WHERE ${key} IN (SELECT ${key} FROM ${stageName(parent)}) LIMIT 1`);
  return rows.length > 0;
}

function stageName(spec: TableSpec): string {
  return `stage_${spec.name}`;
}
