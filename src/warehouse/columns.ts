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

/**
 * Column kinds the warehouse declares. One description gives the DuckDB DDL and the
 * Arrow schema, so the two cannot drift.
 */
export type ColumnKind = 'varchar' | 'int' | 'bigint' | 'double' | 'bool' | 'timestamptz' | 'date' | 'json' | 'decimal' | 'varchar[]';

export interface ColumnSpec {
  name: string;
  kind: ColumnKind;
  /** Part of the row key; never null. */
  key?: boolean;
  doc?: string;
}

export interface TableSpec {
  name: string;
  /** The grain, for the schema reference: what one row is. */
  grain: string;
  columns: ColumnSpec[];
  /** Column whose value names the Parquet `date=` partition. */
  partitionBy?: string;
  /** Rows sharing this column's value are replaced together on reload (a task's rows). */
  replaceKey?: string;
}

const SQL: Record<ColumnKind, string> = {
  varchar: 'VARCHAR',
  int: 'INTEGER',
  bigint: 'BIGINT',
  double: 'DOUBLE',
  bool: 'BOOLEAN',
  timestamptz: 'TIMESTAMPTZ',
  date: 'DATE',
  json: 'JSON',
  decimal: 'DECIMAL(18,6)',
  'varchar[]': 'VARCHAR[]',
};

/** `CREATE TABLE IF NOT EXISTS` for a spec. */
export function createTableSql(t: TableSpec): string {
  const cols = t.columns.map((c) => `  ${c.name} ${SQL[c.kind]}${c.key ? ' NOT NULL' : ''}`);
  return `CREATE TABLE IF NOT EXISTS ${t.name} (\n${cols.join(',\n')}\n)`;
}

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
