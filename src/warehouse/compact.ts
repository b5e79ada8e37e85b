import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bigints, runColumns, varchars } from './bulk.js';
import { writeDurably } from './raw-landing.js';
import type { Warehouse } from './warehouse.js';

/**
 * Concatenates the one-response files of each (day, kind, run) into one segment file
 * `raw/<date>/<kind>--<run>.seg-<first call>.ndjson.gz`.
 * Each landed response is a whole gzip member, so the segment is their bytes end to end
 * (a valid multi-member gzip, every body unchanged) and DuckDB reads one file instead of
 * thousands. The segment is written and fsynced, then the index points at it in one
 * transaction, then the small files go: a crash at any point leaves every body reachable.
 */
export async function compactRaw(wh: Warehouse): Promise<{ segments: number; responses: number }> {
  const rows = await wh.all<{ file: string; call_id: string; run_id: string; kind: string; bytes: bigint }>(
    `SELECT file, call_id, run_id, kind, bytes FROM raw_responses WHERE file NOT LIKE '%.seg-%' ORDER BY file`,
  );
  const groups = new Map<string, typeof rows>();
  for (const r of rows) {
    const dir = r.file.slice(0, r.file.lastIndexOf('/'));
    const key = `${dir}/${r.kind}--${r.run_id}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  let segments = 0;
  for (const [key, members] of groups) {
    // A landed file may hold several responses (callbacks landed together): read it once.
    const files = [...new Set(members.map((m) => m.file))];
    if (files.length < 2) continue;
    const parts: Buffer[] = [];
    for (const f of files) parts.push(await readFile(join(wh.dir, f)));
    const seg = `${key}.seg-${members[0]!.call_id.slice(0, 8)}.ndjson.gz`;
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
       FROM (SELECT unnest($2::VARCHAR[]) AS f, unnest($3::BIGINT[]) AS o) AS v WHERE raw_responses.file = v.f`,
      [seg, varchars(files), bigints(offsets)],
    );
    for (const f of files) await rm(join(wh.dir, f), { force: true });
    segments++;
  }
  return { segments, responses: rows.length };
}
