import { DECLARED_TABLES } from '../normalize/result-tables/index.js';
import { ALL_TABLES, UNPUBLISHED_TABLES } from '../tables.js';
import type { Warehouse } from '../warehouse.js';
import { PUBLISH_TABLES } from './manifest-tables.js';
import { constantPartitioning, partitioningOf, runDatePartitioning, type Partitioning } from './partitioning.js';

/**
 * How a table's changes since the last publish are found:
 * - `loaded`: data tables; the loader marks each partition and key it adds or replaces, in
 *   the load's transaction (`publish_dirty`);
 * - `runs`: state tables written in place by a run (tasks move from planned to collected,
 *   a run ends); the partitions holding rows of runs whose `runs` row changed since the last
 *   publish, read through the run id's zone maps (run ids sort by start time);
 * - `compared`: models and small tables rebuilt by others; each partition in scope is
 *   fingerprinted (row count and row-hash sum) and rewritten when it differs from the
 *   published one. `since` limits the scope to partitions from the last published one on
 *   (incremental marts rebuild only from their last built day);
 * - `whole`: small tables with no date, fingerprinted whole and filed under the run date.
 */
export type Tracking = 'loaded' | 'runs' | 'compared' | 'whole';

export interface PublishedTable {
  name: string;
  parts: Partitioning;
  tracking: Tracking;
  /** For `loaded` tables: the replace key the loader records (task_id, call_id). */
  key?: string;
  /** For `compared` tables: only partitions from the last published one on can change. */
  since?: 'lastPublished';
  /** The model whose build state says when its history was rebuilt in full. */
  model?: string;
}

/** The marts and cluster tables BI tools read, with the column naming their day. */
export const PUBLISHED_MODELS: readonly { name: string; date?: string; incremental?: boolean }[] = [
  { name: 'rank_history', date: 'check_date', incremental: true },
  { name: 'domain_visibility_daily', date: 'check_date', incremental: true },
  { name: 'share_of_serp_daily', date: 'check_date', incremental: true },
  { name: 'search_volume_trends', date: 'month_start' },
  { name: 'spend_daily', date: 'call_date' },
  { name: 'keyword_clusters' },
  { name: 'keyword_cluster_summary' },
  { name: 'keyword_embeddings', date: 'embedded_at' },
  { name: 'locations' },
];

const RUN_TABLES = new Set(['runs', 'tasks', 'ledger', 'raw_responses']);

/**
 * Every table the publish writes, with how its partitions are found. `day` is the run
 * date, the partition of tables with no date of their own.
 */
export async function publishedTables(wh: Warehouse, day: string): Promise<PublishedTable[]> {
  const cols = new Map<string, string[]>();
  for (const r of await wh.all<{ t: string; c: string }>(
    `SELECT table_name AS t, column_name AS c FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name, column_index`,
  )) {
    cols.set(r.t, [...(cols.get(r.t) ?? []), r.c]);
  }
  const base = new Set((await wh.all<{ t: string }>(`SELECT table_name AS t FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'`)).map((r) => r.t));
  const out: PublishedTable[] = [];
  const specs = new Map([...ALL_TABLES, ...DECLARED_TABLES].map((t) => [t.name, t]));
  const generic = (await wh.all<{ t: string; k: string | null }>(`SELECT table_name AS t, any_value(spec->>'$.table.replaceKey') AS k FROM schema_columns GROUP BY 1 ORDER BY 1`)).filter((g) => !specs.has(g.t));
  const whole = (name: string): PublishedTable => ({ name, parts: constantPartitioning(day), tracking: 'whole' });
  for (const t of ALL_TABLES) {
    if (!base.has(t.name) || UNPUBLISHED_TABLES.has(t.name)) continue;
    const parts = t.name === 'run_jobs' ? runDatePartitioning() : partitioningOf({ partitionBy: t.partitionBy, columns: cols.get(t.name) ?? [] });
    if (RUN_TABLES.has(t.name) || t.name === 'run_jobs') out.push({ name: t.name, parts: parts!, tracking: 'runs' });
    else if (parts) out.push({ name: t.name, parts, tracking: 'compared' });
    else out.push(whole(t.name));
  }
  const data = [...DECLARED_TABLES.map((t) => ({ name: t.name, partitionBy: t.partitionBy, key: t.replaceKey })), ...generic.map((g) => ({ name: g.t, partitionBy: undefined, key: g.k ?? undefined }))];
  for (const t of data) {
    if (!base.has(t.name) || PUBLISH_TABLES.has(t.name)) continue;
    const parts = partitioningOf({ partitionBy: t.partitionBy, columns: cols.get(t.name) ?? [] });
    out.push(parts && t.key ? { name: t.name, parts, tracking: 'loaded', key: t.key } : whole(t.name));
  }
  for (const m of PUBLISHED_MODELS) {
    if (!base.has(m.name)) continue;
    if (!m.date) out.push(whole(m.name));
    else out.push({ name: m.name, parts: partitioningOf({ partitionBy: m.date, columns: cols.get(m.name) ?? [] })!, tracking: 'compared', ...(m.incremental ? { since: 'lastPublished' as const, model: m.name } : {}) });
  }
  return out;
}
