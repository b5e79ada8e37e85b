import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bigints, runColumns, varchars } from '../bulk.js';
import { sqlList, sqlString } from '../columns.js';
import { writeDurably } from './write-durably.js';
import { checkIndexedFiles, type DamagedRawFile } from './reindex.js';
import type { Warehouse } from '../warehouse.js';

/**
 * Concatenates the one-response files of each (day, kind, run) into one segment file
 * `raw/<date>/<kind>--<run>.seg-<first call>.ndjson.gz`.
 * Each landed response is a whole gzip member, so the segment is their bytes end to end
 * (a valid multi-member gzip, every body unchanged) and DuckDB reads one file instead of
 * thousands. The segment is written and fsynced, then the index points at it in one
 * transaction, then the small files go: a crash at any point leaves every body reachable.
 *
 * Each small file is read whole first (rawFileDamage): a damaged one is never copied into a
 * segment, where it would make every answer after it unreadable. It is kept apart under a
 * `.damaged` name, what can be read of it is indexed from a salvaged copy, and its tasks are
 * put to be fetched again (setAsideDamaged); `damaged` lists them for the run's notes.
 */
export async function compactRaw(
  wh: Warehouse,
  o: { at?: Date; files?: readonly string[]; runId?: string } = {},
): Promise<{ segments: number; responses: number; damaged: DamagedRawFile[] }> {
  await wh.flushIndex();
  // `files`: only these (relative to the warehouse), as a run compacts what it has loaded so far.
  // `runId` (with `files`): their run's, so each look reads the row groups of tonight's index rows (the run id,
  // which starts with the date, is in DuckDB's zone maps) and not a year of them, 50 times a night.
  const ofRun = o.files === undefined || o.runId === undefined ? '' : ` AND run_id = ${sqlString(o.runId)}`;
  const only = o.files === undefined ? '' : ` AND file IN (SELECT unnest(${sqlList(o.files)}::VARCHAR[]))${ofRun}`;
  if (o.files?.length === 0) return { segments: 0, responses: 0, damaged: [] };
  const pieces = await wh.all<{ f: string }>(`SELECT DISTINCT file AS f FROM raw_responses WHERE file NOT LIKE '%.seg-%'${only} ORDER BY file`);
  const damaged = await checkIndexedFiles(
    wh,
    pieces.map((p) => p.f),
    o.at,
    o.files === undefined ? undefined : o.runId,
  );
  const rows = await wh.all<{ file: string; call_id: string; run_id: string; kind: string; bytes: bigint }>(
    `SELECT file, call_id, run_id, kind, bytes FROM raw_responses WHERE file NOT LIKE '%.seg-%'${only} ORDER BY file`,
  );
  const groups = new Map<string, typeof rows>();
  for (const r of rows) {
    const dir = r.file.slice(0, r.file.lastIndexOf('/'));
    const key = `${dir}/${r.kind}--${r.run_id}`;
    // Pushed, not copied: a night pulled task by task is tens of thousands of files in one group.
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  let segments = 0;
  for (const [key, members] of groups) {
    // A landed file may hold several responses (callbacks landed together): read it once.
    const files = [...new Set(members.map((m) => m.file))];
    if (files.length < 2) continue;
    const parts = await inChunks(files, (f) => readFile(join(wh.dir, f)));
    // Named by its first call, whole: a call is in one segment, so no segment is ever written over another.
    const seg = `${key}.seg-${members[0]!.call_id}.ndjson.gz`;
    await writeDurably(join(wh.dir, seg), Buffer.concat(parts));
    const offsets: bigint[] = [];
    let offset = 0n;
    for (const p of parts) {
      offsets.push(offset);
      offset += BigInt(p.length);
    }
    // One statement for the whole segment: one per file took longer than the copy itself.
    await runColumns(
      wh,
      `UPDATE raw_responses SET file = $1, byte_offset = v.o + raw_responses.byte_offset
       FROM (SELECT unnest($2::VARCHAR[]) AS f, unnest($3::BIGINT[]) AS o) AS v WHERE raw_responses.file = v.f${ofRun}`,
      [seg, varchars(files), bigints(offsets)],
    );
    await inChunks(files, (f) => rm(join(wh.dir, f), { force: true }));
    segments++;
  }
  return { segments, responses: rows.length, damaged };
}

/**
 * `fn` over `xs` in order, {@link AT_ONCE} at a time: a run leaves thousands of small files,
 * and one read or delete at a time left the file system's thread pool idle (compaction
 * was most of a 10,000-task run's last seconds).
 */
async function inChunks<T, R>(xs: readonly T[], fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < xs.length; i += AT_ONCE) out.push(...(await Promise.all(xs.slice(i, i + AT_ONCE).map(fn))));
  return out;
}

const AT_ONCE = 32;
