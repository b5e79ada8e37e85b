import { ident, sqlString } from '../columns.js';
import type { Warehouse } from '../warehouse.js';
import type { PublishedTable } from './published-tables.js';

/**
 * What one partition needs: `append` writes a new file with the rows of `keys` only (rows
 * a load added); `rewrite` replaces the partition's files with one file of all its rows
 * (none left: the partition goes); `drop` removes the partition's files (a small table with
 * no date moved to the run date); `fingerprint` is recorded for compared tables.
 */
export interface PartChange {
  table: string;
  part: string;
  mode: 'append' | 'rewrite' | 'drop';
  keys?: string[];
  fingerprint?: string;
}

export interface PlanOptions {
  /** Tables whose every partition is rewritten (after a replay, a repair). */
  rebuild: ReadonlySet<string> | 'all';
}

const FP = `count(*)::VARCHAR || ':' || coalesce(sum(hash(t))::VARCHAR, '0')`;

/**
 * What the manifest holds, read once for every table: per table, its published partitions with
 * their fingerprint (compared and whole tables) or null (partitions of files with no fingerprint).
 * A table with no entry was never published. One query, not three per table: the list of
 * tables is long (every declared table and mart) and most have nothing published.
 */
async function publishedPartsByTable(wh: Warehouse): Promise<Map<string, Map<string, string | null>>> {
  const rows = await wh.all<{ t: string; p: string; f: string | null }>(
    `SELECT DISTINCT f.table_name AS t, f.part::VARCHAR AS p, NULL AS f FROM publish_files AS f
     WHERE NOT EXISTS (SELECT 1 FROM publish_parts AS x WHERE x.table_name = f.table_name AND x.part = f.part)
     UNION ALL SELECT table_name, part::VARCHAR, fingerprint FROM publish_parts`,
  );
  const out = new Map<string, Map<string, string | null>>();
  for (const r of rows) {
    let parts = out.get(r.t);
    if (!parts) out.set(r.t, (parts = new Map()));
    parts.set(r.p, r.f);
  }
  return out;
}

async function allParts(wh: Warehouse, t: PublishedTable): Promise<string[]> {
  return (await wh.all<{ p: string }>(`SELECT DISTINCT (${t.parts.expr})::VARCHAR AS p FROM ${ident(t.name)} AS t`)).map((r) => r.p);
}

/** Every partition rewritten: the table's own and those published before (which may have emptied). */
async function rebuildAll(wh: Warehouse, t: PublishedTable, published: ReadonlyMap<string, string | null>): Promise<PartChange[]> {
  const parts = new Set([...(await allParts(wh, t)), ...published.keys()]);
  return [...parts].map((part) => ({ table: t.name, part, mode: 'rewrite' }));
}

/** Partitions a load marked: replaced ones rewritten, the others get the added keys' rows. */
async function loadedChanges(wh: Warehouse, t: PublishedTable): Promise<PartChange[]> {
  const rows = await wh.all<{ p: string; r: boolean; keys: string[] }>(
    `SELECT part::VARCHAR AS p, bool_or(replaced) AS r, list(DISTINCT key) FILTER (WHERE key IS NOT NULL) AS keys FROM publish_dirty WHERE table_name = $1 GROUP BY part ORDER BY part`,
    [t.name],
  );
  return rows.map((r) => (r.r ? { table: t.name, part: r.p, mode: 'rewrite' } : { table: t.name, part: r.p, mode: 'append', keys: r.keys ?? [] }));
}

/** Partitions holding rows of the runs in `_publish_changed_runs`, found through the run id's zone maps. */
async function runChanges(wh: Warehouse, t: PublishedTable, runIds: readonly string[]): Promise<PartChange[]> {
  if (runIds.length === 0) return [];
  const sorted = [...runIds].sort();
  const range = `t.run_id BETWEEN ${sqlString(sorted[0]!)} AND ${sqlString(sorted.at(-1)!)} AND t.run_id IN (SELECT run_id FROM _publish_changed_runs)`;
  let sql = `SELECT DISTINCT (${t.parts.expr})::VARCHAR AS p FROM ${ident(t.name)} AS t WHERE ${range}`;
  // A re-parse rewrites an older run's task (its rows_loaded): the refetching run names it.
  if (t.name === 'tasks') {
    sql += ` UNION SELECT DISTINCT (${t.parts.expr})::VARCHAR FROM tasks AS t WHERE t.task_id IN (SELECT task_id FROM task_refetches AS t WHERE ${range})`;
  }
  return (await wh.all<{ p: string }>(sql)).map((r) => ({ table: t.name, part: r.p, mode: 'rewrite' }));
}

/**
 * Partitions in scope whose fingerprint differs from the published one (all of them with
 * `force`), and published ones in scope that have no rows any more.
 */
async function comparedChanges(
  wh: Warehouse,
  t: PublishedTable,
  published: ReadonlyMap<string, string | null>,
  fullScope: boolean,
  force: boolean,
): Promise<PartChange[]> {
  const last = !fullScope && t.since === 'lastPublished' && published.size > 0 ? [...published.keys()].sort().at(-1)! : undefined;
  const scope = last ? t.parts.since(last) : 'true';
  const now = await wh.all<{ p: string; f: string }>(`SELECT (${t.parts.expr})::VARCHAR AS p, ${FP} AS f FROM ${ident(t.name)} AS t WHERE ${scope} GROUP BY 1`);
  const out: PartChange[] = [];
  const seen = new Set<string>();
  for (const r of now) {
    seen.add(r.p);
    if (force || published.get(r.p) !== r.f) out.push({ table: t.name, part: r.p, mode: 'rewrite', fingerprint: r.f });
  }
  for (const p of published.keys()) if (!seen.has(p) && (!last || p >= last)) out.push({ table: t.name, part: p, mode: 'rewrite' });
  return out;
}

/** A small table with no date: one partition under the run date, rewritten when its fingerprint moved. */
async function wholeChanges(wh: Warehouse, t: PublishedTable, published: ReadonlyMap<string, string | null>, force: boolean): Promise<PartChange[]> {
  const [now] = await wh.all<{ p: string; f: string }>(`SELECT (${t.parts.expr})::VARCHAR AS p, ${FP} AS f FROM ${ident(t.name)} AS t`);
  const same = published.size === 1 && [...published.values()][0] === now!.f;
  if (same && !force) return [];
  const out: PartChange[] = [...published.keys()].filter((p) => p !== now!.p).map((part) => ({ table: t.name, part, mode: 'drop' as const }));
  out.push({ table: t.name, part: now!.p, mode: 'rewrite', fingerprint: now!.f });
  return out;
}

/**
 * The changes of every table since the last publish. A table never published before (a
 * warehouse older than incremental publishing, a new mart) is published whole once.
 */
export async function planChanges(wh: Warehouse, tables: readonly PublishedTable[], runIds: readonly string[], fullModels: ReadonlySet<string>, o: PlanOptions): Promise<PartChange[]> {
  const out: PartChange[] = [];
  const manifest = await publishedPartsByTable(wh);
  for (const t of tables) {
    const rebuild = o.rebuild === 'all' || o.rebuild.has(t.name);
    const published = manifest.get(t.name) ?? new Map<string, string | null>();
    const never = published.size === 0;
    if (t.tracking === 'whole') out.push(...(await wholeChanges(wh, t, published, rebuild)));
    else if (t.tracking === 'compared') out.push(...(await comparedChanges(wh, t, published, rebuild || never || fullModels.has(t.name), rebuild)));
    else if (rebuild || never) out.push(...(await rebuildAll(wh, t, published)));
    else if (t.tracking === 'loaded') out.push(...(await loadedChanges(wh, t)));
    else out.push(...(await runChanges(wh, t, runIds)));
  }
  return out;
}
