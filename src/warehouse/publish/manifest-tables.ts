import type { Warehouse } from '../warehouse.js';

/**
 * The publishing bookkeeping, kept in the run's own DuckDB file beside the data it
 * describes, so a change and its mark commit together:
 *
 * - `publish_dirty`: what loads changed since the last publish, written in the load's own
 *   transaction (see `markLoaded`): one row per table, partition and replace key of added
 *   rows, and one row with `replaced` for a partition a replace deleted rows from;
 * - `publish_files`: the files the published layout holds now (path under `parquet/`), each
 *   with the columns it was written with (`columns`, see `fileColumns`; filled in at the next
 *   publish for files published before it was kept);
 * - `publish_parts`: a fingerprint (row count and row-hash sum) per published partition of
 *   the tables compared rather than marked (marts, small whole tables);
 * - `publish_runs`: each run as last published (its state and end), so a run whose row
 *   changed since is republished;
 * - `publish_journal`: the file moves of a publish whose manifest is committed but whose
 *   files may not all be in place yet (a crash there is finished by the next publish).
 */
export async function ensurePublishTables(wh: Warehouse): Promise<void> {
  await wh.run(`CREATE TABLE IF NOT EXISTS publish_dirty (table_name VARCHAR NOT NULL, part DATE NOT NULL, replaced BOOLEAN NOT NULL, key VARCHAR)`);
  await wh.run(`CREATE TABLE IF NOT EXISTS publish_files (table_name VARCHAR NOT NULL, part DATE NOT NULL, file VARCHAR NOT NULL, rows BIGINT, seq INTEGER)`);
  await wh.run(`ALTER TABLE publish_files ADD COLUMN IF NOT EXISTS columns VARCHAR`);
  await wh.run(`CREATE TABLE IF NOT EXISTS publish_parts (table_name VARCHAR NOT NULL, part DATE NOT NULL, fingerprint VARCHAR)`);
  await wh.run(`CREATE TABLE IF NOT EXISTS publish_runs (run_id VARCHAR NOT NULL, state VARCHAR, finished_at TIMESTAMPTZ)`);
  await wh.run(`CREATE TABLE IF NOT EXISTS publish_journal (seq INTEGER NOT NULL, action VARCHAR NOT NULL, file VARCHAR NOT NULL, staged VARCHAR)`);
  await wh.run(`CREATE TABLE IF NOT EXISTS publish_meta (key VARCHAR NOT NULL, value VARCHAR)`);
}

/** Tables of the publishing bookkeeping: never published themselves. */
export const PUBLISH_TABLES: ReadonlySet<string> = new Set(['publish_dirty', 'publish_files', 'publish_parts', 'publish_runs', 'publish_journal', 'publish_meta']);
