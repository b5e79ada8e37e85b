import { copyFile, link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import PQueue from 'p-queue';
import { ident, sqlString } from '../columns.js';

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

/** Hard links made at once when a snapshot is published. */
const LINKS_AT_ONCE = 32;
/** What joins a published file's folders and name in a flat snapshot. */
const FLAT = '__';
/** The column read_parquet names each row's file in (dropped from the views). */
const FILE_COLUMN = '_pipeline_file';

async function linkOrCopy(from: string, to: string): Promise<void> {
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
 * hard links under `serving/<seq>-<id>/` (a copy where the file system has no links): a publish
 * that removes files from `parquet/` (a rewrite, a compaction) leaves them there for
 * readers still holding an older catalog. A snapshot goes once it is `keep.generations`
 * publishes old and was made more than `keep.hours` ago (a reader may hold the catalog for
 * a whole night).
 * The views of the main schema read the files by absolute paths, the folder's as it is at this
 * publish, so a reader opens the catalog from any folder with no setting. The same views in the
 * schema `relative` read them by paths relative to the folder, for a folder moved or mounted at
 * another path until its next publish writes the new paths: a reader runs `published.open_with`
 * first (file_search_path at the folder, search_path to `relative`), since DuckDB keeps those
 * settings per connection, not in the file, and a view cannot find its own file (see openWith).
 * DuckDB looks for a relative path in the reader's working folder first, so `id` (the
 * warehouse's own, from its first publish) keeps a reader started in another warehouse's folder
 * from reading that warehouse's snapshot of the same number: it reads this one, or fails.
 * The catalog is written to a temp file and renamed over the old one, which readers keep open
 * unharmed. `serving/lake.duckdb` (LAKE_CATALOG) is the same catalog over `parquet/`, for the lake.
 */
export async function publishServing(
  dir: string,
  seq: number,
  files: readonly { table: string; file: string; columns?: string | null }[],
  keep: ServingKeep,
  id = '',
): Promise<string> {
  const snapshot = join('serving', id ? `${seq}-${id}` : String(seq));
  const byTable = new Map<string, Entry[]>();
  // A snapshot is flat, a folder per table: `rank_history/date=2025-02-22/part-3.parquet` is
  // linked as `rank_history/date=2025-02-22__part-3.parquet`. A folder per partition made a
  // year of daily partitions cost 3,700 mkdirs a night (1.2 s); the partition values are
  // read back from the names in the views below.
  for (const t of new Set(files.map((f) => f.file.split('/')[0]!))) await mkdir(join(dir, snapshot, t), { recursive: true });
  const links = new PQueue({ concurrency: LINKS_AT_ONCE });
  await links.addAll(
    files.map((f) => async () => {
      const [table, ...rest] = f.file.split('/');
      const flat = `${table}/${rest.join(FLAT)}`;
      await linkOrCopy(join(dir, 'parquet', f.file), join(dir, snapshot, flat));
      const parts = rest.slice(0, -1).map((seg) => seg.split('=', 2) as [string, string]);
      const entries = byTable.get(f.table) ?? [];
      entries.push({ path: `${snapshot}/${flat}`, lakePath: `parquet/${f.file}`, parts, columns: f.columns ?? null });
      byTable.set(f.table, entries);
    }),
  );
  const tmp = join(dir, `${SERVING_FILE}.tmp-${seq}`);
  const root = resolve(dir);
  const open = openWith(root, RELATIVE_SCHEMA);
  await writeCatalog(tmp, dir, seq, byTable, open, [
    {
      schema: 'main',
      pathOf: (e) => `${root}/${e.path}`,
      note: `Reads Parquet by absolute paths under ${root}, the warehouse folder at publish ${seq}: opens from any folder. Moved or mounted at another path, it fails with "No files found that match the pattern" until the next publish there (pipeline run, or pipeline models run) writes the new paths; meanwhile run first: ${openWith('<the folder holding this catalog, where it is now>', RELATIVE_SCHEMA)}; (it reads the same views in the schema ${RELATIVE_SCHEMA}, by paths relative to the folder).`,
    },
    {
      schema: RELATIVE_SCHEMA,
      pathOf: (e) => e.path,
      note: `Reads Parquet by paths relative to the warehouse folder, wherever it is mounted: run first ${openWith('<the folder holding this catalog>', RELATIVE_SCHEMA)}; (${open}; where it was published).`,
    },
  ]);
  // The lake's catalog (lake/local-layout.ts uploads it as serving.duckdb): the same views over the
  // lake's own keys, parquet/..., relative to wherever a reader copies the prefix to, since the
  // snapshots stay on this machine.
  await mkdir(join(dir, 'serving'), { recursive: true });
  const lakeTmp = join(dir, 'serving', `${LAKE_CATALOG}.tmp-${seq}`);
  const lakeOpen = openWith(LAKE_FOLDER);
  await writeCatalog(lakeTmp, dir, seq, byTable, lakeOpen, [
    {
      schema: 'main',
      pathOf: (e) => e.lakePath,
      note: `Reads Parquet by paths relative to the lake prefix (parquet/...). A reader started in another folder fails with "No files found that match the pattern"; run first: ${lakeOpen}; (the folder the prefix was copied to).`,
    },
  ]);
  await rename(lakeTmp, join(dir, 'serving', LAKE_CATALOG));
  const target = join(dir, SERVING_FILE);
  await rename(tmp, target);
  for (const name of await readdir(join(dir, 'serving')).catch(() => [] as string[])) {
    const n = /^\d+(-[0-9a-f]+)?$/.test(name) ? Number(name.split('-')[0]) : Number.NaN;
    if (!Number.isInteger(n) || n > seq - keep.generations) continue;
    const made = (await stat(join(dir, 'serving', name))).mtimeMs;
    if (Date.now() - made > keep.hours * 3_600_000) await rm(join(dir, 'serving', name), { recursive: true, force: true });
  }
  return target;
}

/** A published file in the catalogs: its snapshot path, its key in the lake, its partition values and schema. */
interface Entry {
  path: string;
  lakePath: string;
  parts: [string, string][];
  columns: string | null;
}

/** The lake's catalog, under `serving/` (not a snapshot: no number), uploaded as the lake's `serving.duckdb`. */
export const LAKE_CATALOG = 'lake.duckdb';

/** Where a lake catalog's reader has the lake's prefix (a placeholder: each reader copies or mounts it somewhere). */
const LAKE_FOLDER = '/path/to/the/copied/lake/prefix';

/** The schema of the warehouse catalog whose views read by paths relative to the folder. */
export const RELATIVE_SCHEMA = 'relative';

/**
 * What a reader runs first to read views by relative paths from outside `folder`: DuckDB resolves
 * them against the working folder, then `file_search_path`, which is a setting of the connection
 * and cannot be stored in the catalog (DuckDB 1.5; a view's `read_parquet` arguments cannot be a
 * subquery either, so a view cannot find its own file); `schema` first on the search path, so
 * its views answer to their plain names.
 */
export function openWith(folder: string, schema?: string): string {
  const search = `SET file_search_path = ${sqlString(folder)}`;
  return schema ? `${search}; SET search_path = ${sqlString(`${schema},main`)}` : search;
}

/** One schema of views in a catalog: where each file is read from, and the comment each view carries. */
interface ViewSet {
  schema: string;
  pathOf: (e: Entry) => string;
  note: string;
}

/**
 * Writes a catalog at `tmp`: per set, one view per table over the files at its `pathOf`, each
 * commented with its note and where the columns are documented, and `published` (the publish;
 * `open_with`, the statement for reading by relative paths from another folder; `folder`).
 */
async function writeCatalog(
  tmp: string,
  dir: string,
  seq: number,
  byTable: ReadonlyMap<string, Entry[]>,
  open: string,
  sets: readonly ViewSet[],
): Promise<void> {
  await rm(tmp, { force: true });
  await rm(`${tmp}.wal`, { force: true });
  const instance = await DuckDBInstance.create(tmp);
  try {
    const db = await instance.connect();
    try {
      await db.run(`SET file_search_path = ${sqlString(dir)}`);
      for (const set of sets) {
        if (set.schema !== 'main') await db.run(`CREATE SCHEMA ${ident(set.schema)}`);
        for (const [table, entries] of [...byTable].sort(([a], [b]) => a.localeCompare(b))) {
          const view = `${ident(set.schema)}.${ident(table)}`;
          await db.run(`CREATE VIEW ${view} AS ${viewSql(entries, set.pathOf)}`);
          await db.run(`COMMENT ON VIEW ${view} IS ${sqlString(`${set.note} Columns: docs/schema.md.`)}`);
        }
      }
      await db.run(
        `CREATE TABLE published AS SELECT ${seq}::INTEGER AS seq, now() AS published_at, ${sqlString(open)} AS open_with, ${sqlString(resolve(dir))} AS folder`,
      );
      await db.run('CHECKPOINT');
    } finally {
      db.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/** The SELECT of one table's view: its files at `pathOf`, partition values read back from their names. */
function viewSql(entries: readonly Entry[], pathOf: (e: Entry) => string): string {
  const keys = [...new Set(entries.flatMap((e) => e.parts.map(([k]) => k)))];
  const cols = keys.map((k) => {
    const values = entries.flatMap((e) => e.parts.filter(([x]) => x === k).map(([, v]) => v));
    // `k=v__` in a snapshot's flat name, `k=v/` in the lake's folders; the last such part of the
    // path, so an absolute path's folders above the table's never count.
    const value = `regexp_extract(${FILE_COLUMN}, ${sqlString(`^.*(?:/|${FLAT})${k}=([^/]*?)(?:${FLAT}|/)`)}, 1)`;
    return `${values.every((v) => /^\d{4}-\d{2}-\d{2}$/.test(v)) ? `CAST(${value} AS DATE)` : value} AS ${ident(k)}`;
  });
  // One read per schema the files were written with, joined by name: a read of files that all
  // have one schema binds from the first file's footer, where union_by_name reads every footer,
  // a cost that grows with the history (docs/performance.md). Files without a recorded schema
  // (published before the manifest kept one) are read by name.
  const groups = new Map<string | null, string[]>();
  for (const e of entries) {
    const paths = groups.get(e.columns) ?? [];
    paths.push(pathOf(e));
    groups.set(e.columns, paths);
  }
  return [...groups]
    .map(([columns, paths]) => ({ columns, paths: paths.sort() }))
    .sort((a, b) => a.paths[0]!.localeCompare(b.paths[0]!))
    .map(({ columns, paths }) => {
      const byName = columns === null ? ', union_by_name = true' : '';
      return `SELECT * EXCLUDE (${FILE_COLUMN})${cols.map((c) => `, ${c}`).join('')}
           FROM read_parquet([${paths.map(sqlString).join(', ')}], filename = '${FILE_COLUMN}', hive_partitioning = false${byName})`;
    })
    .join('\n           UNION ALL BY NAME ');
}
