import {
  Bool,
  DateDay,
  Field,
  Float64,
  Int32,
  Int64,
  List,
  Schema,
  TimestampMicrosecond,
  Utf8,
  type DataType,
} from 'apache-arrow';
import type { ColumnKind, ColumnSpec, TableSpec } from './columns.js';

// The Arrow side of the column kinds of ./columns.ts (which gives their DuckDB DDL), apart so that
// opening the warehouse does not load Apache Arrow: only the commands that read Arrow do.

function arrowType(kind: ColumnKind): DataType {
  switch (kind) {
    case 'int':
      return new Int32();
    case 'bigint':
      return new Int64();
    case 'double':
      return new Float64();
    case 'bool':
      return new Bool();
    case 'timestamptz':
      return new TimestampMicrosecond('UTC');
    case 'date':
      return new DateDay();
    case 'varchar[]':
      return new List(new Field('item', new Utf8(), true));
    case 'bigint[]':
      return new List(new Field('item', new Int64(), true));
    case 'double[]':
      return new List(new Field('item', new Float64(), true));
    default:
      return new Utf8();
  }
}

/**
 * The Arrow schema of a table, as handed to callers of the normalizer. Every field is
 * nullable in Arrow (the key columns' NOT NULL is enforced by DuckDB on load).
 */
export function arrowSchema(t: TableSpec): Schema {
  return new Schema(t.columns.map((c) => new Field(c.name, arrowType(c.kind), true)));
}

export function arrowTypeOf(c: ColumnSpec): DataType {
  return arrowType(c.kind);
}
