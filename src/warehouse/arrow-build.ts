import { Table, vectorFromArray, type Vector } from 'apache-arrow';
import { arrowTypeOf, type TableSpec } from './columns.js';

/** A row as the normalizer produces it: column name to JS value (null when absent). */
export type Row = Record<string, unknown>;

/**
 * Builds an Arrow table with the declared schema of `spec` from normalized rows. Values
 * are coerced to the column kind; anything that does not fit becomes null (the original
 * stays in the raw landing and in the row's `extra` JSON).
 */
export function rowsToArrow(spec: TableSpec, rows: readonly Row[]): Table {
  const vectors: Record<string, Vector> = {};
  for (const col of spec.columns) {
    const values = rows.map((r) => coerce(col.kind, r[col.name]));
    vectors[col.name] = vectorFromArray(values as unknown[], arrowTypeOf(col));
  }
  return new Table(vectors);
}

function coerce(kind: string, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  switch (kind) {
    case 'int':
      return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 2147483647 ? v : null;
    case 'bigint':
      return typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : typeof v === 'bigint' ? v : null;
    case 'double':
      return typeof v === 'number' && Number.isFinite(v) ? v : null;
    case 'bool':
      return typeof v === 'boolean' ? v : null;
    case 'timestamptz':
    case 'date':
      return v instanceof Date ? v.getTime() : typeof v === 'number' ? v : null;
    case 'varchar[]':
      return Array.isArray(v) ? v.map((x) => (x === null || x === undefined ? null : String(x))) : null;
    case 'json':
      return typeof v === 'string' ? v : JSON.stringify(v);
    default:
      return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
  }
}
