import { copyFile, link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ident } from '../columns.js';

/** The read-only catalog BI tools open instead of the run's own DuckDB file. */
export const SERVING_FILE = 'serving.duckdb';

/** How long serving snapshots outlive their successors (`PIPELINE_SERVING_KEEP_HOURS`, default 24). */
export interface ServingKeep {
  generations: number;
  hours: number;
}

export function servingKeep(env: NodeJS.ProcessEnv = process.env): ServingKeep {
  const h = Number(env.PIPELINE_SERVING_KEEP_HOURS);
  return { generations: 2, hours: env.PIPELINE_SERVING_KEEP_HOURS !== undefined && Number.isFinite(h) && h >= 0 ? h : 24 };
}

function quote(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code === 'EXDEV' || code === 'EPERM' || code === 'ENOTSUP') await copyFile(from, to);
    else throw err;
  }
}

/**
 * Publishes `serving.duckdb`: one view per table over an explicit list of its published
 * files, so a reader sees exactly one publish, never half of the next. The files are
 * hard links under `serving/<seq>/` (a copy where the file system has no links): a publish
 * that removes files from `parquet/` (a rewrite, a compaction) leaves them there for
 * readers still holding an older catalog. A snapshot goes once it is `keep.generations`
 * publishes old and was made more than `keep.hours` ago (a reader may hold the catalog for
 * a whole night).
 * Paths are relative to the warehouse folder, so the catalog works wherever the folder is
 * mounted: readers set `file_search_path` to the folder (or start in it). The catalog is
 * written to a temp file and renamed over the old one, which readers keep open unharmed.
 */
export async function publishServing(dir: string, seq: number, files: readonly { table: string; file: string }[], keep: ServingKeep): Promise<string> {
  const snapshot = join('serving', String(seq));
  const byTable = new Map<string, string[]>();
  for (const f of files) {
    await linkOrCopy(join(dir, 'parquet', f.file), join(dir, snapshot, f.file));
    byTable.set(f.table, [...(byTable.get(f.table) ?? []), `${snapshot}/${f.file}`]);
  }
  const tmp = join(dir, `${SERVING_FILE}.tmp-${seq}`);
  await rm(tmp, { force: true });
  await rm(`${tmp}.wal`, { force: true });
  const instance = await DuckDBInstance.create(tmp);
  try {
    const db = await instance.connect();
    try {
      await db.run(`SET file_search_path = ${quote(dir)}`);
      for (const [table, paths] of [...byTable].sort(([a], [b]) => a.localeCompare(b))) {
        const list = `[${paths.map(quote).join(', ')}]`;
        await db.run(`CREATE VIEW ${ident(table)} AS SELECT * FROM read_parquet(${list}, hive_partitioning = true, union_by_name = true)`);
      }
      await db.run(`CREATE TABLE published AS SELECT ${seq}::INTEGER AS seq, now() AS published_at`);
      await db.run('CHECKPOINT');
    } finally {
      db.closeSync();
    }
  } finally {
    instance.closeSync();
  }
  const target = join(dir, SERVING_FILE);
  await rename(tmp, target);
  for (const name of await readdir(join(dir, 'serving')).catch(() => [] as string[])) {
    const n = Number(name);
    if (!Number.isInteger(n) || n > seq - keep.generations) continue;
    const made = (await stat(join(dir, 'serving', name))).mtimeMs;
    if (Date.now() - made > keep.hours * 3_600_000) await rm(join(dir, 'serving', name), { recursive: true, force: true });
  }
  return target;
}
