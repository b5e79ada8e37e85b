import { ident, sqlList } from '../columns.js';
import { EtlError } from '../../errors.js';
import { CALLS_KIND, DECLARED_KINDS } from '../normalize/result-tables/index.js';
import { loadLanded, type LoadReport } from './load-landed.js';
import { MALFORMED_KIND } from '../landing/landed-line.js';
import { checkIndexedFiles, reindexRaw, type DamagedRawFile } from '../landing/reindex.js';
import type { Warehouse } from '../warehouse.js';

/** What a replay did, beyond the load: the damaged raw files it found and the rows it kept. */
export interface ReplayReport extends LoadReport {
  kinds: string[];
  reindexed: number;
  /** Landed files found damaged (by the reindex or the check before the tables are emptied), kept apart. */
  damaged: DamagedRawFile[];
  /** Tasks with rows but no readable answer indexed (lost with a damaged file, now or before): their rows were kept as they were. */
  keptTasks: string[];
  /** Rows kept so, per table (rows of `/v1` calls with no readable answer included). */
  keptRows: Map<string, number>;
}

/**
 * Rebuilds typed tables from the raw landing alone, with no call to the service: the
 * tables of the chosen kinds are emptied and every landed response of those kinds is
 * loaded again (the newest response of each task wins, as in a normal load). With a
 * table, the whole kind it belongs to is rebuilt, since its tables share keys. Landed files
 * missing from the raw index (a lost or older database) are indexed first. Both steps read
 * the files a batch at a time (`o.batchBytes` of gzip; see `reindexRaw` and `loadLanded`),
 * so a replay of a year needs the memory and scratch space of a batch, not of the year.
 *
 * A replay never drops rows it cannot rebuild: every file of the kinds is read whole before
 * any row is dropped, and a damaged one is kept apart (setAsideDamaged: renamed `….damaged`,
 * what can be read of it loaded from a salvaged copy); then only the rows of tasks (or `/v1`
 * calls) with a readable answer indexed are dropped and loaded again. The rows of a task whose
 * answer is lost stay as they are, and a collected task is put to be fetched again by the
 * next run (`task_refetches`, `task_get` is free).
 */
export async function replay(
  wh: Warehouse,
  o: { table?: string; batchBytes?: number; readDirectBelow?: number; pieceBytes?: number; at?: Date } = {},
): Promise<ReplayReport> {
  const batch = o.batchBytes === undefined ? {} : { batchBytes: o.batchBytes };
  const damaged: DamagedRawFile[] = [];
  const reindexed = await reindexRaw(wh, undefined, { ...batch, damaged, ...(o.at ? { at: o.at } : {}) });
  const landedKinds = (await wh.all<{ kind: string }>(`SELECT DISTINCT kind FROM raw_responses WHERE kind NOT IN ('${CALLS_KIND}', '${MALFORMED_KIND}') ORDER BY kind`)).map((r) => r.kind);
  let kinds = landedKinds;
  if (o.table) {
    const kind = await kindOfTable(wh, o.table);
    if (!kind) throw new EtlError('ETL_CONFIG_INVALID', `no data table named ${o.table}; \`pipeline schema\` lists them.`);
    kinds = [kind];
  }
  if (kinds.length > 0) {
    const files = await wh.all<{ f: string }>(`SELECT DISTINCT file AS f FROM raw_responses WHERE kind IN (SELECT unnest(${sqlList(kinds)}::VARCHAR[])) ORDER BY f`);
    damaged.push(
      ...(await checkIndexedFiles(
        wh,
        files.map((r) => r.f),
        o.at,
      )),
    );
  }
  // Only the rows the raw index can rebuild are dropped: those of a task (or, for a row without
  // one, a `/v1` call) with a parsed answer of the kinds indexed. Any other row (its answer lost
  // with a damaged file, now or at an earlier replay) stays as it is.
  const ofKinds = `FROM raw_responses WHERE parsed AND kind IN (SELECT unnest(${sqlList(kinds)}::VARCHAR[]))`;
  const keptRows = new Map<string, number>();
  const kept = new Set<string>();
  for (const kind of kinds) {
    for (const t of await tablesOfKind(wh, kind)) {
      const cols = new Set(
        (await wh.all<{ c: string }>(`SELECT column_name AS c FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = current_schema() AND table_name = $1`, [t])).map((r) => r.c),
      );
      if (cols.size === 0) continue;
      const byTask = `task_id IN (SELECT unnest(task_ids) ${ofKinds})`;
      const byCall = `call_id IN (SELECT call_id ${ofKinds})`;
      const rebuilt = cols.has('task_id') ? (cols.has('call_id') ? `${byTask} OR (task_id IS NULL AND ${byCall})` : byTask) : cols.has('call_id') ? byCall : 'true';
      await wh.run(`DELETE FROM ${ident(t)} WHERE coalesce(${rebuilt}, false)`);
      if (rebuilt === 'true') continue;
      const [n] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ${ident(t)}`);
      if (n!.n === 0) continue;
      keptRows.set(t, n!.n);
      if (cols.has('task_id')) for (const r of await wh.all<{ t: string }>(`SELECT DISTINCT task_id AS t FROM ${ident(t)} WHERE task_id IS NOT NULL`)) kept.add(r.t);
    }
  }
  const keptTasks = [...kept].sort();
  const report = await loadLanded(wh, { all: true, kinds }, undefined, {
    ...batch,
    ...(o.readDirectBelow === undefined ? {} : { readDirectBelow: o.readDirectBelow }),
    ...(o.pieceBytes === undefined ? {} : { pieceBytes: o.pieceBytes }),
  });
  return { ...report, kinds, reindexed, damaged, keptTasks, keptRows };
}

/**
 * What a replay (or a run's compaction) says of damaged raw files, a line each: what was kept
 * apart, what was read back, which tasks keep their rows or are fetched again, and what to do.
 */
export function damagedNotes(damaged: readonly DamagedRawFile[]): string[] {
  return damaged.map((d) => {
    const back = d.salvaged ? `${d.kept} answer(s) read back into ${d.salvaged} and loaded` : 'no answer could be read back from it';
    const lost = d.lostTasks.length > 0 ? `; the answers of ${d.lostTasks.length} task(s) are lost with its damaged part (${listed(d.lostTasks)})` : '';
    const calls = d.lostCalls.length > 0 && d.lostTasks.length === 0 ? `; ${d.lostCalls.length} call(s) of it not read back (${listed(d.lostCalls)})` : '';
    const again =
      d.refetch.length > 0
        ? `; their rows are kept as they were, and ${d.refetch.length} collected task(s) are fetched again by the next collection (task_get, free; never posted again)`
        : d.lostTasks.length > 0
          ? '; their rows are kept as they were; a task not collected yet is fetched again by the next run'
          : '';
    const where = d.keptAs ? `kept apart as ${d.keptAs}, never deleted` : 'the file is gone';
    return `raw file ${d.file} is damaged (${d.error}): ${where}; ${back}${lost}${calls}${again}`;
  });
}

function listed(ids: readonly string[]): string {
  return ids.length <= 10 ? ids.join(', ') : `${ids.slice(0, 10).join(', ')} and ${ids.length - 10} more`;
}

async function kindOfTable(wh: Warehouse, table: string): Promise<string | undefined> {
  const declared = DECLARED_KINDS.find((k) => k.tables.some((t) => t.name === table));
  if (declared) return declared.kind;
  const [r] = await wh.all<{ k: string }>(`SELECT result_kind AS k FROM schema_columns WHERE table_name = $1 LIMIT 1`, [table]);
  return r?.k;
}

async function tablesOfKind(wh: Warehouse, kind: string): Promise<string[]> {
  const declared = DECLARED_KINDS.find((k) => k.kind === kind)?.tables.map((t) => t.name) ?? [];
  const stored = (await wh.all<{ t: string }>(`SELECT DISTINCT table_name AS t FROM schema_columns WHERE result_kind = $1`, [kind])).map((r) => r.t);
  return [...new Set([...declared, ...stored])];
}
