import { ident } from './columns.js';
import { EtlError } from './../errors.js';
import { CALLS_KIND, DECLARED_KINDS } from './kinds/index.js';
import { loadLanded, type LoadReport } from './load-landed.js';
import { MALFORMED_KIND } from './raw-landing.js';
import { reindexRaw } from './reindex.js';
import type { Warehouse } from './warehouse.js';

/**
 * Rebuilds typed tables from the raw landing alone, with no call to the service: the
 * tables of the chosen kinds are emptied and every landed response of those kinds is
 * loaded again (the newest response of each task wins, as in a normal load). With a
 * table, the whole kind it belongs to is rebuilt, since its tables share keys. Landed files
 * missing from the raw index (a lost or older database) are indexed first. Both steps read
 * the files a batch at a time (`o.batchBytes` of gzip; see `reindexRaw` and `loadLanded`),
 * so a replay of a year needs the memory and scratch space of a batch, not of the year.
 */
export async function replay(
  wh: Warehouse,
  o: { table?: string; batchBytes?: number; readDirectBelow?: number; pieceBytes?: number } = {},
): Promise<LoadReport & { kinds: string[]; reindexed: number }> {
  const batch = o.batchBytes === undefined ? {} : { batchBytes: o.batchBytes };
  const reindexed = await reindexRaw(wh, undefined, batch);
  const landedKinds = (await wh.all<{ kind: string }>(`SELECT DISTINCT kind FROM raw_responses WHERE kind NOT IN ('${CALLS_KIND}', '${MALFORMED_KIND}') ORDER BY kind`)).map((r) => r.kind);
  let kinds = landedKinds;
  if (o.table) {
    const kind = await kindOfTable(wh, o.table);
    if (!kind) throw new EtlError('ETL_CONFIG_INVALID', `no data table named ${o.table}; \`pipeline schema\` lists them.`);
    kinds = [kind];
  }
  for (const kind of kinds) {
    for (const t of await tablesOfKind(wh, kind)) await wh.run(`DELETE FROM ${ident(t)}`);
  }
  const report = await loadLanded(wh, { all: true, kinds }, undefined, {
    ...batch,
    ...(o.readDirectBelow === undefined ? {} : { readDirectBelow: o.readDirectBelow }),
    ...(o.pieceBytes === undefined ? {} : { pieceBytes: o.pieceBytes }),
  });
  return { ...report, kinds, reindexed };
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
