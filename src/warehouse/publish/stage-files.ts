import { mkdir, open, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ident, sqlString } from '../columns.js';
import type { Warehouse } from '../warehouse.js';
import type { PartChange } from './plan-changes.js';
import type { PublishedTable } from './published-tables.js';

/**
 * The bound on a Parquet row group, as DuckDB estimates its bytes in memory: the writer holds
 * a row group until it is full, so this bounds the memory of writing a file. DuckDB's default
 * of 122,880 rows holds a large night's `serp_items` in one row group; this bound cuts it into
 * smaller groups, for a slightly larger file (docs/performance.md).
 */
export const ROW_GROUP_BYTES = 16 << 20;

/** A new file written under the staging folder, to be renamed into `parquet/` once committed. */
export interface StagedFile {
  table: string;
  part: string;
  /** Path under `parquet/`: `<table>/date=<part>/part-<seq>.parquet`. */
  file: string;
  staged: string;
  rows: number;
  /** The columns the file was written with (`fileColumns`). */
  columns: string;
}

/** What a staged publish does: new files, and the partitions whose old files go. */
export interface StagedPublish {
  files: StagedFile[];
  /** Partitions rewritten or emptied: every file they held is removed. */
  replaced: { table: string; part: string }[];
}

/** `part-000042.parquet`: the publish number names the file, so a redo writes the same name. */
export function fileName(table: string, part: string, seq: number): string {
  return `${table}/date=${part}/part-${String(seq).padStart(6, '0')}.parquet`;
}

async function fsyncFile(path: string): Promise<void> {
  const h = await open(path, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/**
 * The columns of a Parquet file as DuckDB reads them back, names and types in order (one
 * footer read): files with the same value have the same schema.
 */
export async function fileColumns(wh: Warehouse, path: string): Promise<string> {
  const rows = await wh.all<{ c: string }>(`SELECT column_name || ' ' || column_type AS c FROM (DESCRIBE SELECT * FROM read_parquet(${sqlString(path)}))`);
  return rows.map((r) => r.c).join(', ');
}

/**
 * Writes the Parquet file of each change into `stagingDir` (same file system as the
 * layout, so the later rename is atomic), fsynced. An append whose partition already holds
 * `compactAt` files becomes a rewrite of the partition into one file (compaction).
 */
export async function stageFiles(
  wh: Warehouse,
  tables: ReadonlyMap<string, PublishedTable>,
  changes: readonly PartChange[],
  seq: number,
  stagingDir: string,
  compactAt: number,
  rowGroupBytes: number = ROW_GROUP_BYTES,
): Promise<StagedPublish> {
  const out: StagedPublish = { files: [], replaced: [] };
  // The manifest's file count of each partition appended to, read at once.
  const appended = changes.filter((c) => c.mode === 'append').map((c) => [c.table, c.part]);
  const held = new Map<string, number>();
  if (appended.length > 0) {
    const rows = await wh.all<{ t: string; p: string; n: number }>(
      `SELECT table_name AS t, part::VARCHAR AS p, count(*)::INT AS n FROM publish_files WHERE [table_name, part::VARCHAR] IN (SELECT unnest($1::JSON::VARCHAR[][])) GROUP BY 1, 2`,
      [JSON.stringify(appended)],
    );
    for (const r of rows) held.set(`${r.t}\u0000${r.p}`, r.n);
  }
  // Every file of a table is written by the same SELECT: one footer read gives their columns.
  const columnsOf = new Map<string, string>();
  for (const c of changes) {
    const t = tables.get(c.table)!;
    let mode = c.mode;
    if (mode === 'drop') {
      out.replaced.push({ table: c.table, part: c.part });
      continue;
    }
    if (mode === 'append' && (held.get(`${c.table}\u0000${c.part}`) ?? 0) + 1 > compactAt) mode = 'rewrite';
    let where = t.parts.where(c.part);
    if (mode === 'append') where += ` AND t.${ident(t.key!)}::VARCHAR IN (SELECT key FROM publish_dirty WHERE table_name = ${sqlString(c.table)} AND part = DATE ${sqlString(c.part)})`;
    const file = fileName(c.table, c.part, seq);
    const staged = join(stagingDir, file);
    await mkdir(dirname(staged), { recursive: true });
    const r = await wh.db.run(`COPY (SELECT t.* FROM ${ident(c.table)} AS t WHERE ${where}) TO ${sqlString(staged)} (FORMAT parquet, ROW_GROUP_SIZE_BYTES ${Math.floor(rowGroupBytes)})`);
    const rows = Number(r.rowsChanged);
    if (mode === 'rewrite') out.replaced.push({ table: c.table, part: c.part });
    if (rows === 0) {
      await rm(staged, { force: true });
      continue;
    }
    await fsyncFile(staged);
    let columns = columnsOf.get(c.table);
    if (columns === undefined) columnsOf.set(c.table, (columns = await fileColumns(wh, staged)));
    out.files.push({ table: c.table, part: c.part, file, staged, rows, columns });
  }
  return out;
}
