import { join } from 'node:path';
import type { TableSpec } from './columns.js';
import { ALL_TABLES } from './tables.js';
import type { Warehouse } from './warehouse.js';

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/**
 * Writes each table to `parquet/<table>/date=<yyyy-mm-dd>/` (Hive partitions), so any
 * engine reads it without this tool. The folder of each table is rewritten whole, which
 * keeps the copy exactly equal to the table (no duplicates after a reload).
 */
export async function exportParquet(wh: Warehouse, tables: readonly TableSpec[] = ALL_TABLES): Promise<string[]> {
  const written: string[] = [];
  for (const t of tables) {
    const [{ n }] = (await wh.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${t.name}`)) as [{ n: bigint }];
    if (n === 0n) continue;
    const dir = join(wh.parquetDir, t.name);
    const date = t.partitionBy ? `CAST(${t.partitionBy} AS DATE)` : 'current_date';
    await wh.run(
      `COPY (SELECT *, ${date} AS date FROM ${t.name}) TO ${sqlString(dir)}
       (FORMAT parquet, PARTITION_BY (date), OVERWRITE, FILENAME_PATTERN 'part-{i}')`,
    );
    written.push(dir);
  }
  return written;
}
