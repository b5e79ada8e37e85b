import { randomBytes } from 'node:crypto';
import { access, mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EtlError } from '../../errors.js';
import type { Warehouse } from '../warehouse.js';
import { publishServing, type ServingKeep } from './serving-catalog.js';
import { fileColumns } from './stage-files.js';

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Files a journal's moves put in place and took away, as paths under the warehouse folder. */
export interface JournalMoves {
  seq: number;
  written: string[];
  removed: string[];
}

/**
 * Finishes the committed publish in `publish_journal`, if any: renames each staged file
 * to its place, removes the files it replaced, re-publishes the serving catalog and clears
 * the journal. Every step is idempotent (a file already renamed, or already gone, is
 * done), so a crash anywhere in here is finished by the next call.
 */
export async function finishJournal(wh: Warehouse, keep: ServingKeep): Promise<JournalMoves | undefined> {
  const rows = await wh.all<{ seq: number; action: string; file: string; staged: string | null }>(`SELECT seq, action, file, staged FROM publish_journal ORDER BY action, file`);
  if (rows.length === 0) return undefined;
  const seq = rows[0]!.seq;
  const moves: JournalMoves = { seq, written: [], removed: [] };
  for (const r of rows.filter((x) => x.action === 'add')) {
    const target = join(wh.parquetDir, r.file);
    if (r.staged && (await exists(r.staged))) {
      await mkdir(dirname(target), { recursive: true });
      await rename(r.staged, target);
    } else if (!(await exists(target))) {
      throw new EtlError('ETL_WAREHOUSE', `publish ${seq}: staged file ${r.staged} is missing and ${target} was never put in place; run \`pipeline export\` to rewrite the Parquet layout from the tables.`, { context: { stage: 'publish' } });
    }
    moves.written.push(join('parquet', r.file));
  }
  for (const r of rows.filter((x) => x.action === 'remove')) {
    const target = join(wh.parquetDir, r.file);
    await rm(target, { force: true });
    await rmdir(dirname(target)).catch(() => undefined); // the partition's folder, once empty
    moves.removed.push(join('parquet', r.file));
  }
  // Files published before their columns were kept: read once, so the catalog can read each schema's files together.
  const unknown = (await wh.all<{ file: string }>(`SELECT file FROM publish_files WHERE columns IS NULL`)).map((r) => r.file);
  if (unknown.length > 0) {
    const columns: string[] = [];
    for (const file of unknown) columns.push(await fileColumns(wh, join(wh.parquetDir, file)));
    await wh.run(
      `UPDATE publish_files SET columns = v.c FROM (SELECT unnest($1::JSON::VARCHAR[]) AS f, unnest($2::JSON::VARCHAR[]) AS c) AS v WHERE publish_files.file = v.f`,
      [JSON.stringify(unknown), JSON.stringify(columns)],
    );
  }
  const files = await wh.all<{ table: string; file: string; columns: string | null }>(
    `SELECT table_name AS "table", file, columns FROM publish_files ORDER BY table_name, part, file`,
  );
  await publishServing(wh.dir, seq, files, keep, await servingId(wh));
  await wh.run(`DELETE FROM publish_journal WHERE seq = $1`, [seq]);
  await rm(join(wh.dir, '.publish', String(seq)), { recursive: true, force: true });
  return moves;
}

/**
 * The warehouse's serving id, made at its first publish (publishServing names its snapshots by
 * it, so no other warehouse's files match their relative paths).
 */
async function servingId(wh: Warehouse): Promise<string> {
  const [r] = await wh.all<{ v: string | null }>(`SELECT value AS v FROM publish_meta WHERE key = 'serving_id'`);
  if (r?.v) return r.v;
  const id = randomBytes(6).toString('hex');
  await wh.run(`INSERT INTO publish_meta VALUES ('serving_id', $1)`, [id]);
  return id;
}
