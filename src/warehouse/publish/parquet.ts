import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ident, sqlString } from '../columns.js';
import { DECLARED_TABLES } from '../normalize/result-tables/index.js';
import { ROW_GROUP_BYTES } from './stage-files.js';
import { ALL_TABLES, UNPUBLISHED_TABLES } from '../tables.js';
import type { Warehouse } from '../warehouse.js';

/** Every table of the warehouse with its partition column: state, declared and generic (not the runs' working state). */
export async function exportableTables(wh: Warehouse): Promise<{ name: string; partitionBy?: string }[]> {
  const known = new Map<string, string | undefined>([...ALL_TABLES, ...DECLARED_TABLES].filter((t) => !UNPUBLISHED_TABLES.has(t.name)).map((t) => [t.name, t.partitionBy]));
  const generic = await wh.all<{ t: string }>(`SELECT DISTINCT table_name AS t FROM schema_columns ORDER BY 1`);
  for (const { t } of generic) if (!known.has(t)) known.set(t, undefined);
  return [...known].map(([name, partitionBy]) => (partitionBy ? { name, partitionBy } : { name }));
}

/**
 * Writes each table to `parquet/<table>/date=<yyyy-mm-dd>/part-<i>.parquet` (Hive
 * partitions) so Spark, Trino, pandas or DuckDB read it without this tool. A table's
 * folder is rewritten whole, so the copy always equals the table (no duplicates after a
 * reload, no rows left from a replay); an empty table leaves no folder. Tables without a
 * date of their own are filed under the day of the export.
 */
export async function exportParquet(wh: Warehouse, o: { tables?: readonly string[] } = {}): Promise<{ table: string; rows: number; dir: string }[]> {
  const written: { table: string; rows: number; dir: string }[] = [];
  for (const t of await exportableTables(wh)) {
    if (o.tables && !o.tables.includes(t.name)) continue;
    const dir = join(wh.parquetDir, t.name);
    const [{ n }] = (await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ${ident(t.name)}`)) as [{ n: number }];
    if (n === 0) {
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    const date = t.partitionBy ? `CAST(${ident(t.partitionBy)} AS DATE)` : 'current_date';
    await wh.run(
      `COPY (SELECT *, ${date} AS date FROM ${ident(t.name)}) TO ${sqlString(dir)}
       (FORMAT parquet, ROW_GROUP_SIZE_BYTES ${ROW_GROUP_BYTES}, PARTITION_BY (date), OVERWRITE, FILENAME_PATTERN 'part-{i}')`,
    );
    written.push({ table: t.name, rows: n, dir });
  }
  return written;
}
