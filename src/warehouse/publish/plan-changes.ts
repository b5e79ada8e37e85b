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

/** What one table's plan reads: its partitions, with their fingerprint where it is compared. */
type PartRow = { p: string; f: string | null };

/** Every partition rewritten: the table's own and those published before (which may have emptied). */
function rebuildAll(t: PublishedTable, rows: readonly PartRow[], published: ReadonlyMap<string, string | null>): PartChange[] {
  const parts = new Set([...rows.map((r) => r.p), ...published.keys()]);
  return [...parts].map((part) => ({ table: t.name, part, mode: 'rewrite' }));
}

/** The partitions of `t` as one SELECT of `p` (and `f`, the fingerprint, where compared). */
function allPartsSql(t: PublishedTable): string {
  return `SELECT DISTINCT (${t.parts.expr})::VARCHAR AS p, NULL::VARCHAR AS f FROM ${ident(t.name)} AS t`;
}

/** Partitions holding rows of the runs in `_publish_changed_runs`, found through the run id's zone maps. */
function runChangesSql(t: PublishedTable, runIds: readonly string[]): string | undefined {
  if (runIds.length === 0) return undefined;
  const sorted = [...runIds].sort();
  const range = `t.run_id BETWEEN ${sqlString(sorted[0]!)} AND ${sqlString(sorted.at(-1)!)} AND t.run_id IN (SELECT run_id FROM _publish_changed_runs)`;
  let sql = `SELECT DISTINCT (${t.parts.expr})::VARCHAR AS p, NULL::VARCHAR AS f FROM ${ident(t.name)} AS t WHERE ${range}`;
  // A re-parse rewrites an older run's task (its rows_loaded): the refetching run names it.
  if (t.name === 'tasks') {
    sql += ` UNION SELECT DISTINCT (${t.parts.expr})::VARCHAR, NULL::VARCHAR FROM tasks AS t WHERE t.task_id IN (SELECT task_id FROM task_refetches AS t WHERE ${range})`;
  }
  return sql;
}

/** The scope of a compared table: from its last published partition on (incremental marts), else all. */
function comparedSince(t: PublishedTable, published: ReadonlyMap<string, string | null>, fullScope: boolean): string | undefined {
  return !fullScope && t.since === 'lastPublished' && published.size > 0 ? [...published.keys()].sort().at(-1)! : undefined;
}

function comparedSql(t: PublishedTable, last: string | undefined): string {
  return `SELECT (${t.parts.expr})::VARCHAR AS p, ${FP} AS f FROM ${ident(t.name)} AS t WHERE ${last ? t.parts.since(last) : 'true'} GROUP BY 1`;
}

/**
 * Partitions in scope whose fingerprint differs from the published one (all of them with
 * `force`), and published ones in scope that have no rows any more.
 */
function comparedChanges(t: PublishedTable, now: readonly PartRow[], published: ReadonlyMap<string, string | null>, last: string | undefined, force: boolean): PartChange[] {
  const out: PartChange[] = [];
  const seen = new Set<string>();
  for (const r of now) {
    seen.add(r.p);
    if (force || published.get(r.p) !== r.f) out.push({ table: t.name, part: r.p, mode: 'rewrite', fingerprint: r.f! });
  }
  for (const p of published.keys()) if (!seen.has(p) && (!last || p >= last)) out.push({ table: t.name, part: p, mode: 'rewrite' });
  return out;
}

/** A small table with no date: one partition under the run date, rewritten when its fingerprint moved. */
function wholeChanges(t: PublishedTable, now: PartRow, published: ReadonlyMap<string, string | null>, force: boolean): PartChange[] {
  const same = published.size === 1 && [...published.values()][0] === now.f;
  if (same && !force) return [];
  const out: PartChange[] = [...published.keys()].filter((p) => p !== now.p).map((part) => ({ table: t.name, part, mode: 'drop' as const }));
  out.push({ table: t.name, part: now.p, mode: 'rewrite', fingerprint: now.f! });
  return out;
}

/** Partitions a load marked, of every table at once: replaced ones rewritten, the others get the added keys' rows. */
async function loadedChangesByTable(wh: Warehouse): Promise<Map<string, PartChange[]>> {
  const rows = await wh.all<{ t: string; p: string; r: boolean; keys: string[] | null }>(
    `SELECT table_name AS t, part::VARCHAR AS p, bool_or(replaced) AS r, list(DISTINCT key) FILTER (WHERE key IS NOT NULL) AS keys FROM publish_dirty GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  const out = new Map<string, PartChange[]>();
  for (const r of rows) {
    const list = out.get(r.t) ?? [];
    list.push(r.r ? { table: r.t, part: r.p, mode: 'rewrite' } : { table: r.t, part: r.p, mode: 'append', keys: r.keys ?? [] });
    out.set(r.t, list);
  }
  return out;
}

/**
 * The changes of every table since the last publish. A table never published before (a
 * warehouse older than incremental publishing, a new mart) is published whole once.
 *
 * What the tables' partitions hold is read in one statement, a UNION ALL of one SELECT per
 * table, and the load marks in another: a publish reads some hundred tables (every declared
 * result table, most of them empty, and every mart), and a statement apiece cost a small night
 * more than its own rows (about 0.7 ms each).
 */
export async function planChanges(wh: Warehouse, tables: readonly PublishedTable[], runIds: readonly string[], fullModels: ReadonlySet<string>, o: PlanOptions): Promise<PartChange[]> {
  const manifest = await publishedPartsByTable(wh);
  const plans = tables.map((t) => {
    const rebuild = o.rebuild === 'all' || o.rebuild.has(t.name);
    const published = manifest.get(t.name) ?? new Map<string, string | null>();
    const never = published.size === 0;
    const kind =
      t.tracking === 'whole' ? ('whole' as const)
      : t.tracking === 'compared' ? ('compared' as const)
      : rebuild || never ? ('all' as const)
      : t.tracking === 'loaded' ? ('loaded' as const)
      : ('runs' as const);
    const last = kind === 'compared' ? comparedSince(t, published, rebuild || never || fullModels.has(t.name)) : undefined;
    const sql =
      kind === 'whole' ? `SELECT (${t.parts.expr})::VARCHAR AS p, ${FP} AS f FROM ${ident(t.name)} AS t`
      : kind === 'compared' ? comparedSql(t, last)
      : kind === 'all' ? allPartsSql(t)
      : kind === 'runs' ? runChangesSql(t, runIds)
      : undefined;
    return { t, rebuild, published, kind, last, sql };
  });
  const branches = plans.flatMap((x, i) => (x.sql ? [`SELECT ${i} AS i, p, f FROM (${x.sql})`] : []));
  const read = new Map<number, PartRow[]>();
  if (branches.length > 0) {
    for (const r of await wh.all<PartRow & { i: number }>(`${branches.join('\nUNION ALL ')}\nORDER BY i, p`)) {
      const list = read.get(r.i) ?? [];
      list.push({ p: r.p, f: r.f });
      read.set(r.i, list);
    }
  }
  const loaded = plans.some((x) => x.kind === 'loaded') ? await loadedChangesByTable(wh) : new Map<string, PartChange[]>();
  return plans.flatMap((x, i): PartChange[] => {
    const rows = read.get(i) ?? [];
    switch (x.kind) {
      case 'whole':
        return wholeChanges(x.t, rows[0]!, x.published, x.rebuild);
      case 'compared':
        return comparedChanges(x.t, rows, x.published, x.last, x.rebuild);
      case 'all':
        return rebuildAll(x.t, rows, x.published);
      case 'loaded':
        return loaded.get(x.t.name) ?? [];
      case 'runs':
        return rows.map((r) => ({ table: x.t.name, part: r.p, mode: 'rewrite' as const }));
    }
  });
}
