import type { Warehouse } from '../warehouse/index.js';
import type { Model } from './model.js';
import { ident, listRelations } from './relation-info.js';
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

/** The name a test is reported under, and the query that returns its offending rows. */
export function testQuery(model: string, t: ModelTest): { label: string; sql: string } {
  const m = ident(model);
  if ('unique' in t) {
    const cols = t.unique.map(ident).join(', ');
    return { label: `unique(${t.unique.join(', ')})`, sql: `select ${cols}, count(*) as duplicates from ${m} group by ${cols} having count(*) > 1` };
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
      sql: `select child.${ident(column)}, count(*) as rows from ${m} as child where child.${ident(column)} is not null and not exists (select 1 from ${ident(to)} as parent where parent.${ident(field)} = child.${ident(column)}) group by 1`,
    };
  }
  return { label: t.name ?? `expression(${t.expression})`, sql: `select * from ${m} where not coalesce((${t.expression}), false)` };
}

/**
 * Runs every sidecar test of the given models and returns one result per test, naming
 * the model, the test and a sample of the offending rows. Models that are not in the
 * warehouse (skipped by `models run`) have their tests reported as skipped.
 */
export async function testModels(wh: Warehouse, models: readonly Model[], opts: { sampleSize?: number } = {}): Promise<ModelTestResult[]> {
  const sampleSize = opts.sampleSize ?? 5;
  const relations = await listRelations(wh);
  const out: ModelTestResult[] = [];
  for (const m of models) {
    for (const t of m.sidecar.tests) {
      const { label, sql } = testQuery(m.name, t);
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
