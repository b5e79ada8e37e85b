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
 * one transaction deletes the target rows with the same keys, inserts the staged rows and
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
  await wh.transaction(async () => {
    for (const { spec, table } of batches) {
      const stage = stageName(spec);
      const keys = spec.replaceKey ? [spec.replaceKey] : spec.columns.filter((c) => c.key).map((c) => c.name);
      const on = keys.map((k) => `t.${k} = s.${k}`).join(' AND ');
      await wh.run(`DELETE FROM ${spec.name} t WHERE EXISTS (SELECT 1 FROM ${stage} s WHERE ${on})`);
      await wh.run(`INSERT INTO ${spec.name} SELECT * FROM ${stage}`);
      rows += table.numRows;
    }
    await alsoInTransaction();
  });
  return rows;
}

function stageName(spec: TableSpec): string {
  return `stage_${spec.name}`;
}
