/**
 * Column kinds the warehouse declares. One description gives the DuckDB DDL and (./arrow-schema.ts) the
 * Arrow schema, so the two cannot drift.
 */
export type ColumnKind =
  | 'varchar'
  | 'int'
  | 'bigint'
  | 'double'
  | 'bool'
  | 'timestamptz'
  | 'date'
  | 'json'
  | 'decimal'
  | 'varchar[]'
  | 'bigint[]'
  | 'double[]';

export interface ColumnSpec {
  name: string;
  kind: ColumnKind;
  /** Part of the row key; never null. */
  key?: boolean;
  doc?: string;
  /**
   * Where a data table's value comes from: a path relative to the row object
   * (`rating.value`), or from the body root when it starts with `$.`
   * (`$.tasks[].data.tag`, a field of an enclosing level). Defaults to the column name.
   */
  path?: string;
  /** The position in the named list of the rows path (`result` gives result_index). */
  index?: string;
  /** Metadata of the landed response: its `call_id` or the `run_id` that landed it. */
  source?: 'call_id' | 'run_id';
  /** The service's `yyyy-mm-dd hh:mm:ss +00:00` strings, read as a timestamp or its UTC day. */
  transform?: 'service_time' | 'service_date';
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
  /**
   * For data tables: the list in the body whose elements are the rows, e.g.
   * `tasks[].result[].items[]` (empty: the body itself is the one row).
   */
  rows?: string;
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
  'bigint[]': 'BIGINT[]',
  'double[]': 'DOUBLE[]',
};

/** The DuckDB type of a column kind. */
export function sqlType(kind: ColumnKind): string {
  return SQL[kind];
}

/** Double-quotes an identifier for DuckDB. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A SQL string literal of `s`. */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** A SQL list literal of the strings `xs`. */
export function sqlList(xs: readonly string[]): string {
  return `[${xs.map(sqlString).join(',')}]`;
}

/**
 * One statement whose one row holds the column of each of `queries` (each a SELECT of one row,
 * one column, named): the queries go in FROM, not as scalar subqueries in SELECT, which DuckDB
 * wraps each in a check that it gave one row (an aggregate of its own).
 */
export function oneRowOf(queries: readonly string[]): string {
  return `SELECT * FROM ${queries.map((q) => `(${q})`).join(', ')}`;
}

/**
 * ` AND received_at BETWEEN …` for rows received from `loUs` to `hiUs` (microseconds since the
 * epoch), a second wider on each side: a bound implied by the filter that chose the rows, so it
 * changes no result, but DuckDB skips other nights' row groups of the raw index by their zone
 * maps. Written as `make_timestamptz(µs)`: a text timestamp cast to TIMESTAMPTZ and shifted by
 * an interval costs DuckDB more to bind in each statement that holds one.
 */
export function receivedBetween(loUs: bigint, hiUs: bigint): string {
  return ` AND received_at BETWEEN make_timestamptz(${loUs - 1_000_000n}) AND make_timestamptz(${hiUs + 1_000_000n})`;
}

/** `CREATE TABLE IF NOT EXISTS` for a spec. */
export function createTableSql(t: TableSpec): string {
  const cols = t.columns.map((c) => `  ${ident(c.name)} ${SQL[c.kind]}${c.key ? ' NOT NULL' : ''}`);
  return `CREATE TABLE IF NOT EXISTS ${ident(t.name)} (\n${cols.join(',\n')}\n)`;
}
