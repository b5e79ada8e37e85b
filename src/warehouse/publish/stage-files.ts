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
  for (const c of changes) {
    const t = tables.get(c.table)!;
    let mode = c.mode;
    if (mode === 'drop') {
      out.replaced.push({ table: c.table, part: c.part });
      continue;
    }
    if (mode === 'append') {
      const [{ n }] = (await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM publish_files WHERE table_name = $1 AND part = $2::DATE`, [c.table, c.part])) as [{ n: number }];
      if (n + 1 > compactAt) mode = 'rewrite';
    }
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
    out.files.push({ table: c.table, part: c.part, file, staged, rows, columns: await fileColumns(wh, staged) });
  }
  return out;
}
