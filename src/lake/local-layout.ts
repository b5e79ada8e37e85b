import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** One file of the published layout, by its key relative to the warehouse folder. */
export interface LocalFile {
  /** Relative key with '/' separators, e.g. `parquet/serp_items/date=2026-01-01/part-0.parquet`. */
  rel: string;
  path: string;
  size: number;
  mtimeMs: number;
}

/**
 * The published layout the lake mirrors: the Parquet tree and the serving catalog. The lake's
 * `serving.duckdb` is the warehouse's `serving/lake.duckdb`: the local `serving.duckdb` reads
 * snapshots under `serving/<seq>-<id>/` that stay on this machine, the lake's reads `parquet/`.
 */
export const LAYOUT = { parquetDir: 'parquet', servingFile: 'serving.duckdb', lakeCatalog: 'serving/lake.duckdb' } as const;

/** True for keys the lake owns (and so may delete when they are gone locally). */
export function isLayoutKey(rel: string): boolean {
  return rel === LAYOUT.servingFile || (rel.startsWith(`${LAYOUT.parquetDir}/`) && rel.split('/').every(isPublished));
}

/**
 * Files being written are not part of the layout: dot- and underscore-files (temporary
 * copies renamed into place, Spark's and Hadoop's `_SUCCESS` markers), `*.tmp` and
 * DuckDB's `tmp_` files.
 */
function isPublished(name: string): boolean {
  return !(name.startsWith('.') || name.startsWith('_') || name.startsWith('tmp_') || name.endsWith('.tmp') || name.endsWith('.wal'));
}

/**
 * Lists the published layout under a warehouse folder, sorted by key: every file under
 * `parquet/`, and the lake's catalog as `serving.duckdb` when present. The run's own `warehouse.duckdb` and
 * `raw/` are private working state and never leave the machine.
 */
export async function listLocalLayout(warehouseDir: string): Promise<LocalFile[]> {
  const out: LocalFile[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      const key = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (isPublished(e.name)) await walk(path, key);
      } else if (e.isFile() && isPublished(e.name)) {
        const s = await stat(path);
        out.push({ rel: key, path, size: s.size, mtimeMs: s.mtimeMs });
      }
    }
  };
  await walk(join(warehouseDir, LAYOUT.parquetDir), LAYOUT.parquetDir);
  try {
    const path = join(warehouseDir, LAYOUT.lakeCatalog);
    const s = await stat(path);
    if (s.isFile()) out.push({ rel: LAYOUT.servingFile, path, size: s.size, mtimeMs: s.mtimeMs });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}
