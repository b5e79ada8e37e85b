import type { Warehouse } from '../warehouse/index.js';
import type { Model } from './model.js';
import { ident, listRelations } from './relation-info.js';
import type { ModelBuildResult } from './build-models.js';
import type { ModelTest } from './sidecar.js';

/** The outcome of one sidecar test: the model, the test, and the offending rows. */
export interface ModelTestResult {
  model: string;
  test: string;
  /** `warned`: a `severity: warn` test found offending rows; reported, never a failure. */
  status: 'passed' | 'failed' | 'warned' | 'skipped' | 'error';
  /** How many rows break the test (for `accepted_values` and `relationships`, how many distinct values; each sample row has its `rows` count). */
  failures: number;
  /** Up to `sampleSize` offending rows, for the message. */
  sample: Record<string, unknown>[];
  message?: string;
}

function literal(v: string | number | boolean): string {
  return typeof v === 'string' ? `'${v.replace(/'/g, "''")}'` : String(v);
}

/**
 * The rows of a model a test reads: all of them, or, in a nightly build, only those whose
 * date column is on or after the date the night rebuilt from (`column >= since`, `since` a
 * SQL literal).
 */
export interface TestScope {
  column: string;
  since: string;
}

/** The name a test is reported under, and the query that returns its offending rows. */
export function testQuery(model: string, t: ModelTest, scope?: TestScope): { label: string; sql: string } {
  // A scoped test reads the model's rows from the scope's date on, under the model's own name
  // (expressions refer to it, e.g. `rank_history.keyword` in a correlated subquery).
  const rows = scope ? `(select * from ${ident(model)} where ${ident(scope.column)} >= ${scope.since})` : ident(model);
  const m = scope ? `${rows} as ${ident(model)}` : rows;
  if ('unique' in t) {
    const cols = t.unique.map(ident).join(', ');
    return {
      label: `unique(${t.unique.join(', ')})`,
      sql: `select ${cols}, count(*) as duplicates from ${m} group by ${cols} having count(*) > 1`,
    };
  }
  if ('not_null' in t) {
    const cond = t.not_null.map((c) => `${ident(c)} is null`).join(' or ');
    return { label: `not_null(${t.not_null.join(', ')})`, sql: `select * from ${m} where ${cond}` };
  }
  if ('accepted_values' in t) {
    const { column, values } = t.accepted_values;
    return {
      label: `accepted_values(${column})`,
      sql: `select ${ident(column)}, count(*) as rows from ${m} where ${ident(column)} is not null and ${ident(column)} not in (${values.map(literal).join(', ')}) group by 1`,
    };
  }
  if ('relationships' in t) {
    const { column, to, field } = t.relationships;
    return {
      label: `relationships(${column} -> ${to}.${field})`,
      sql: `select child.${ident(column)}, count(*) as rows from ${rows} as child where child.${ident(column)} is not null and not exists (select 1 from ${ident(to)} as parent where parent.${ident(field)} = child.${ident(column)}) group by 1`,
    };
  }
  return { label: t.name ?? `expression(${t.expression})`, sql: `select * from ${m} where not coalesce((${t.expression}), false)` };
}

/**
 * Runs every sidecar test of the given models and returns one result per test, naming
 * the model, the test and a sample of the offending rows. Models that are not in the
 * warehouse (skipped by `models run`) have their tests reported as skipped. A model in
 * `opts.scopes` is tested on the rows of its scope only (see {@link nightScopes}): with a
 * year of history, a night's tests read the night, not the year.
 */
export async function testModels(
  wh: Warehouse,
  models: readonly Model[],
  opts: { sampleSize?: number; scopes?: ReadonlyMap<string, TestScope> } = {},
): Promise<ModelTestResult[]> {
  const sampleSize = opts.sampleSize ?? 5;
  const relations = await listRelations(wh);
  const out: ModelTestResult[] = [];
  for (const m of models) {
    for (const t of m.sidecar.tests) {
      const scope = opts.scopes?.get(m.name);
      const { label: name, sql } = testQuery(m.name, t, scope);
      const label = scope ? `${name} since ${scope.since}` : name;
      if (!relations.has(m.name.toLowerCase())) {
        out.push({ model: m.name, test: label, status: 'skipped', failures: 0, sample: [], message: `${m.name} is not built` });
        continue;
      }
      try {
        const [row] = await wh.all<{ n: number }>(`select count(*)::double as n from (${sql})`);
        const failures = Number(row?.n ?? 0);
        const sample = failures > 0 ? await wh.all(`${sql} limit ${sampleSize}`) : [];
        const offending = t.severity === 'warn' ? 'warned' : 'failed';
        out.push({ model: m.name, test: label, status: failures > 0 ? offending : 'passed', failures, sample });
      } catch (err) {
        out.push({ model: m.name, test: label, status: 'error', failures: 0, sample: [], message: (err as Error).message });
      }
    }
  }
  return out;
}

/**
 * The scopes of a nightly build's tests: an incremental model built incrementally is tested
 * on the rows it rebuilt (its key from its `since` on); when every incremental model of the
 * build was built incrementally, a model with a sidecar `date_key` (views over nightly
 * loads) is tested from the earliest of those dates on. Anything built in full, and every
 * model after a build that rebuilt an incremental model in full, is tested whole (none here).
 */
export function nightScopes(models: readonly Model[], builds: readonly ModelBuildResult[]): Map<string, TestScope> {
  const scopes = new Map<string, TestScope>();
  const byName = new Map(models.map((m) => [m.name, m]));
  const incremental = builds.filter((b) => b.status === 'built' && b.materialized === 'incremental');
  for (const b of incremental) {
    const key = byName.get(b.name)?.sidecar.incremental?.key;
    if (b.mode === 'incremental' && b.since !== undefined && key) scopes.set(b.name, { column: key, since: b.since });
  }
  if (incremental.length === 0 || scopes.size < incremental.length) return scopes;
  // The earliest rebuilt date: literals of one key type compare in SQL, not here, so the
  // least of them is left to DuckDB.
  const dates = [...new Set([...scopes.values()].map((s) => s.since))];
  const since = dates.length === 1 ? dates[0]! : `least(${dates.join(', ')})`;
  for (const b of builds) {
    const key = byName.get(b.name)?.sidecar.date_key;
    if (b.status === 'built' && key && !scopes.has(b.name)) scopes.set(b.name, { column: key, since });
  }
  return scopes;
}
