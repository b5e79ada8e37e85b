import { readdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Warehouse } from '../warehouse.js';
import { bigints, runColumns, varchars } from '../bulk.js';
import { sqlString } from '../columns.js';
import { finishJournal } from './finish-journal.js';
import { ensurePublishTables } from './manifest-tables.js';
import { planChanges, type PartChange } from './plan-changes.js';
import { publishedTables, type PublishedTable } from './published-tables.js';
import { SERVING_FILE, servingKeep, type ServingKeep } from './serving-catalog.js';
import { stageFiles, type StagedPublish } from './stage-files.js';

export interface PublishOptions {
  /** The run's clock: its UTC day files tables that have no date of their own. */
  now?: () => Date;
  /** Tables rewritten in every partition (after `pipeline replay`), or `'all'` (`pipeline export`, a repair). */
  rebuild?: readonly string[] | 'all';
  /** Files a partition may hold before the next append compacts it into one (default 8, `PIPELINE_PUBLISH_COMPACT_FILES`). */
  compactAt?: number;
  /** The bound on a Parquet row group's bytes in memory (default 16 MiB, `ROW_GROUP_BYTES`): the memory of writing a file. */
  rowGroupBytes?: number;
  /** How long serving snapshots stay for readers holding an older catalog (default: 2 publishes and 24 hours, `PIPELINE_SERVING_KEEP_HOURS`). */
  keepServing?: ServingKeep;
  /**
   * Test hook, awaited after each step: `staged` (files written, nothing committed),
   * `committed` (manifest and journal committed, files not yet moved). A test kills the
   * process there, or throws, to check that the next publish finishes the job.
   */
  onStep?: (step: 'staged' | 'committed') => Promise<void> | void;
}

/** What one publish did; `written` and `removed` are what a lake copy must mirror. */
export interface PublishOutcome {
  seq: number;
  /** A crashed publish the call finished first (its moves are in `written` and `removed`). */
  finished?: number;
  tables: { table: string; partitions: number; files: number; rows: number }[];
  /** Files put in place, as paths under the warehouse folder (`parquet/<table>/date=<day>/part-<seq>.parquet`). */
  written: string[];
  /** Files taken away (rewritten partitions, compactions, emptied partitions). */
  removed: string[];
  /** The serving catalog re-published at the end. */
  serving: string;
  ms: number;
}

/** Tables published for the first time, or rebuilt: their folder is reconciled with the manifest. */
async function freshTables(wh: Warehouse, tables: readonly PublishedTable[], rebuild: ReadonlySet<string> | 'all'): Promise<string[]> {
  const published = new Set((await wh.all<{ t: string }>(`SELECT DISTINCT table_name AS t FROM publish_files UNION SELECT DISTINCT table_name FROM publish_parts`)).map((r) => r.t));
  return tables.filter((t) => rebuild === 'all' || rebuild.has(t.name) || !published.has(t.name)).map((t) => t.name);
}

/** Parquet files under `parquet/<table>/`, as paths under `parquet/`. */
async function filesOf(parquetDir: string, table: string): Promise<string[]> {
  const entries = await readdir(join(parquetDir, table), { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((e) => e.isFile() && e.name.endsWith('.parquet')).map((e) => relative(parquetDir, join(e.parentPath, e.name)));
}

/** The files the manifest names for `tables` (paths under `parquet/`), in one query. */
async function manifestFiles(wh: Warehouse, tables: readonly string[]): Promise<Set<string>> {
  const rows = await wh.all<{ f: string }>(`SELECT file AS f FROM publish_files WHERE table_name IN (SELECT unnest($1::JSON::VARCHAR[]))`, [JSON.stringify(tables)]);
  return new Set(rows.map((r) => r.f));
}

function compactAtDefault(): number {
  const n = Number(process.env.PIPELINE_PUBLISH_COMPACT_FILES);
  return Number.isInteger(n) && n >= 1 ? n : 8;
}

/** Runs whose `runs` row changed since the last publish, and new cluster runs (ledger rows without a run row). */
async function changedRuns(wh: Warehouse): Promise<{ ids: string[]; marks: [string, string][] }> {
  // Calls made outside a run (no runs row): cluster labels (`cluster-<time>`) and `pipeline api`
  // (`api-<time>`), each prefix published from the newest id the last publish took.
  const marks: [string, string][] = [];
  const unions: string[] = [];
  for (const [prefix, key] of OUTSIDE_RUNS) {
    const [meta] = await wh.all<{ v: string }>(`SELECT value AS v FROM publish_meta WHERE key = $1`, [key]);
    marks.push([key, meta?.v ?? prefix]);
    unions.push(`SELECT DISTINCT run_id FROM ledger WHERE run_id > ${sqlString(meta?.v ?? prefix)} AND run_id LIKE ${sqlString(`${prefix}%`)}`);
  }
  await wh.run(
    `CREATE OR REPLACE TEMP TABLE _publish_changed_runs AS
     SELECT r.run_id FROM runs AS r LEFT JOIN publish_runs AS p USING (run_id)
     WHERE p.run_id IS NULL OR p.state IS DISTINCT FROM r.state OR p.finished_at IS DISTINCT FROM r.finished_at
     ${unions.map((u) => `UNION ${u}`).join('\n     ')}`,
  );
  const ids = (await wh.all<{ r: string }>(`SELECT run_id AS r FROM _publish_changed_runs ORDER BY 1`)).map((x) => x.r);
  return {
    ids,
    marks: OUTSIDE_RUNS.map(([prefix, key], i) => {
      const newest = ids.filter((x) => x.startsWith(prefix)).sort().at(-1);
      const was = marks[i]![1];
      return [key, newest && newest > was ? newest : was];
    }),
  };
}

/** Run-id prefixes of calls made outside a run, and the publish_meta key of the newest published. */
const OUTSIDE_RUNS: readonly [string, string][] = [
  ['cluster-', 'cluster_max'],
  ['api-', 'api_max'],
];

/** Incremental marts rebuilt in full since the last publish: their build fingerprint moved. */
async function modelFingerprints(wh: Warehouse, tables: readonly PublishedTable[]): Promise<{ full: Set<string>; now: Map<string, string> }> {
  const full = new Set<string>();
  const now = new Map<string, string>();
  const hasState = (await wh.all(`SELECT 1 FROM duckdb_tables() WHERE table_name = 'model_state' AND database_name = current_database()`)).length > 0;
  // A build in full (full_at, build-state.ts) changes what it records too: a full refresh keeps
  // the fingerprint, and may change days before the last one published (a back-filled night).
  if (hasState) await wh.run(`ALTER TABLE model_state ADD COLUMN IF NOT EXISTS full_at TIMESTAMPTZ`);
  for (const t of tables.filter((x) => x.model)) {
    const [cur] = hasState
      ? await wh.all<{ f: string }>(`SELECT fingerprint::VARCHAR || coalesce(' full ' || full_at::VARCHAR, '') AS f FROM model_state WHERE model = $1`, [t.model!])
      : [];
    const [old] = await wh.all<{ v: string }>(`SELECT value AS v FROM publish_meta WHERE key = $1`, [`model:${t.model}`]);
    const f = cur?.f ?? '';
    now.set(t.model!, f);
    if (old?.v !== f) full.add(t.name);
  }
  return { full, now };
}

/**
 * Publishes what changed since the last publish as Parquet under `parquet/<table>/date=<day>/`,
 * then re-publishes the serving catalog. Call it last, after loading and the models: it
 * reads only the partitions the night touched.
 *
 * Crash safety: new files are written to `.publish/<seq>/` and fsynced; one transaction then
 * commits the new manifest (`publish_files`), the consumed change marks and a journal of the
 * file moves; the moves (rename into place, remove replaced files) and the catalog follow.
 * A crash before the commit leaves everything as before (the marks are still there, the
 * staged files are dropped); after it, the next publish finishes the journal first.
 */
export async function publish(wh: Warehouse, o: PublishOptions = {}): Promise<PublishOutcome> {
  const t0 = performance.now();
  const keep = o.keepServing ?? servingKeep();
  await ensurePublishTables(wh);
  await wh.flushIndex();
  const finished = await finishJournal(wh, keep);
  await rm(join(wh.dir, '.publish'), { recursive: true, force: true });
  const day = (o.now?.() ?? new Date()).toISOString().slice(0, 10);
  const tables = await publishedTables(wh, day);
  const byName = new Map(tables.map((t) => [t.name, t]));
  const runs = await changedRuns(wh);
  const models = await modelFingerprints(wh, tables);
  const rebuild = o.rebuild === 'all' ? 'all' : new Set(o.rebuild ?? []);
  const fresh = await freshTables(wh, tables, rebuild);
  const changes = await planChanges(wh, tables, runs.ids, models.full, { rebuild });
  const [last] = await wh.all<{ v: string }>(`SELECT value AS v FROM publish_meta WHERE key = 'seq'`);
  const seq = Number(last?.v ?? 0) + 1;
  const stagingDir = join(wh.dir, '.publish', String(seq));
  const staged = await stageFiles(wh, byName, changes, seq, stagingDir, o.compactAt ?? compactAtDefault(), o.rowGroupBytes);
  await o.onStep?.('staged');

  await commitManifest(wh, { seq, staged, fresh, changes, byName, tables, meta: [['seq', String(seq)], ...runs.marks, ['published_at', new Date().toISOString()], ...[...models.now].map(([m, f]) => [`model:${m}`, f] as [string, string])] });
  await o.onStep?.('committed');
  const moves = (await finishJournal(wh, keep))!;

  const perTable = new Map<string, PublishOutcome['tables'][number]>();
  for (const c of changes) {
    const e = perTable.get(c.table) ?? { table: c.table, partitions: 0, files: 0, rows: 0 };
    e.partitions++;
    perTable.set(c.table, e);
  }
  for (const f of staged.files) {
    const e = perTable.get(f.table)!;
    e.files++;
    e.rows += f.rows;
  }
  return {
    seq,
    ...(finished ? { finished: finished.seq } : {}),
    tables: [...perTable.values()],
    written: [...(finished?.written ?? []), ...moves.written],
    removed: [...(finished?.removed ?? []), ...moves.removed],
    serving: join(wh.dir, SERVING_FILE),
    ms: Math.round(performance.now() - t0),
  };
}

/** What one publish commits: its number, its staged files, the tables it planned and what it changed. */
interface Commit {
  seq: number;
  staged: StagedPublish;
  fresh: readonly string[];
  changes: readonly PartChange[];
  byName: ReadonlyMap<string, PublishedTable>;
  tables: readonly PublishedTable[];
  meta: readonly [string, string][];
}

/** Partitions as two columns for `runColumns`: the tables (`$1`), their days as text (`$2`, cast to DATE in the SQL). */
const partColumns = (parts: readonly { table: string; part: string }[]) => [varchars(parts.map((x) => x.table)), varchars(parts.map((x) => x.part))];
const PARTS = `(SELECT unnest($1::VARCHAR[]) AS t, unnest($2::VARCHAR[])::DATE AS p)`;

/**
 * Commits a publish in one transaction: the new manifest (publish_files, publish_parts), the
 * consumed change marks, the runs and marks as published, and the journal of the file moves.
 * Set-based, a statement per kind of row rather than per row: a night's publish writes some
 * seventy files and fingerprints a hundred partitions.
 */
async function commitManifest(wh: Warehouse, c: Commit): Promise<void> {
  const { seq, staged, fresh, changes, byName, tables, meta } = c;
  await wh.transaction(async () => {
    if (staged.replaced.length > 0) {
      const parts = partColumns(staged.replaced);
      await runColumns(wh, `INSERT INTO publish_journal SELECT DISTINCT $3::INTEGER, 'remove', f.file, NULL FROM publish_files AS f JOIN ${PARTS} AS v ON f.table_name = v.t AND f.part = v.p`, [...parts, seq]);
      await runColumns(wh, `DELETE FROM publish_files AS f USING ${PARTS} AS v WHERE f.table_name = v.t AND f.part = v.p`, parts);
    }
    // Files of a table published for the first time (or rebuilt) that no manifest names: an
    // older tool's full export, a lost manifest. They go, so the folder holds only the manifest's.
    const named = new Set((await wh.all<{ f: string }>(`SELECT file AS f FROM publish_journal WHERE seq = $1 AND action = 'remove'`, [seq])).map((r) => r.f));
    const known = fresh.length === 0 ? new Set<string>() : await manifestFiles(wh, fresh);
    const strays: string[] = [];
    for (const table of fresh) for (const f of await filesOf(wh.parquetDir, table)) if (!known.has(f) && !named.has(f)) strays.push(f);
    if (strays.length > 0) await runColumns(wh, `INSERT INTO publish_journal SELECT $2::INTEGER, 'remove', unnest($1::VARCHAR[]), NULL`, [varchars(strays), seq]);
    if (staged.files.length > 0) {
      const f = staged.files;
      const files = varchars(f.map((x) => x.file));
      await runColumns(
        wh,
        `INSERT INTO publish_files (table_name, part, file, rows, seq, columns)
         SELECT unnest($1::VARCHAR[]), unnest($2::VARCHAR[])::DATE, unnest($3::VARCHAR[]), unnest($4::BIGINT[]), $6::INTEGER, unnest($5::VARCHAR[])`,
        [...partColumns(f), files, bigints(f.map((x) => BigInt(x.rows))), varchars(f.map((x) => x.columns)), seq],
      );
      await runColumns(wh, `INSERT INTO publish_journal SELECT $2::INTEGER, 'add', unnest($1::VARCHAR[]), unnest($3::VARCHAR[])`, [files, seq, varchars(f.map((x) => x.staged))]);
    }
    const parts = changes.filter((x) => x.fingerprint !== undefined || byName.get(x.table)!.tracking === 'compared' || byName.get(x.table)!.tracking === 'whole');
    if (parts.length > 0) {
      await runColumns(wh, `DELETE FROM publish_parts AS f USING ${PARTS} AS v WHERE f.table_name = v.t AND f.part = v.p`, partColumns(parts));
      const printed = parts.filter((x) => x.fingerprint !== undefined);
      if (printed.length > 0) {
        await runColumns(wh, `INSERT INTO publish_parts SELECT unnest($1::VARCHAR[]), unnest($2::VARCHAR[])::DATE, unnest($3::VARCHAR[])`, [
          ...partColumns(printed),
          varchars(printed.map((x) => x.fingerprint!)),
        ]);
      }
    }
    // The change marks are consumed with the publish that wrote them out.
    await wh.run(`DELETE FROM publish_dirty WHERE table_name NOT IN (SELECT unnest($1::VARCHAR[]))`, [JSON.stringify(tables.filter((t) => t.tracking === 'loaded').map((t) => t.name))]);
    const consumed = changes.filter((x) => byName.get(x.table)!.tracking === 'loaded');
    if (consumed.length > 0) await runColumns(wh, `DELETE FROM publish_dirty AS f USING ${PARTS} AS v WHERE f.table_name = v.t AND f.part = v.p`, partColumns(consumed));
    await wh.run(`DELETE FROM publish_runs`);
    await wh.run(`INSERT INTO publish_runs SELECT run_id, state, finished_at FROM runs`);
    const keys = varchars(meta.map((m) => m[0]));
    await runColumns(wh, `DELETE FROM publish_meta WHERE key IN (SELECT unnest($1::VARCHAR[]))`, [keys]);
    await runColumns(wh, `INSERT INTO publish_meta SELECT unnest($1::VARCHAR[]), unnest($2::VARCHAR[])`, [keys, varchars(meta.map((m) => m[1]))]);
    // A publish with nothing to move still re-publishes the catalog (a first publish, a lost file).
    await wh.run(`INSERT INTO publish_journal SELECT $1, 'catalog', '', NULL WHERE NOT EXISTS (SELECT 1 FROM publish_journal WHERE seq = $1)`, [seq]);
  });
}
