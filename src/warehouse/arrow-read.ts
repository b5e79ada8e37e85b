import { RecordBatch, Schema, Field, makeData, Struct, vectorFromArray, type Vector } from 'apache-arrow';
import { DuckDBListValue } from '@duckdb/node-api';
import { arrowTypeOf } from './arrow-schema.js';
import { ident, type ColumnKind, type ColumnSpec } from './columns.js';
import type { Warehouse } from './warehouse.js';

const KINDS: Record<string, ColumnKind> = {
  VARCHAR: 'varchar',
  INTEGER: 'int',
  BIGINT: 'bigint',
  DOUBLE: 'double',
  BOOLEAN: 'bool',
  'TIMESTAMP WITH TIME ZONE': 'timestamptz',
  DATE: 'date',
  JSON: 'json',
  'VARCHAR[]': 'varchar[]',
  'BIGINT[]': 'bigint[]',
  'DOUBLE[]': 'double[]',
};

/** The columns of a warehouse table with their kinds, as the Arrow schema describes them. */
export async function tableColumns(wh: Warehouse, table: string): Promise<ColumnSpec[]> {
  const rows = await wh.all<{ name: string; type: string }>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = 'main' AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => ({ name: r.name, kind: KINDS[r.type] ?? (r.type.startsWith('DECIMAL') ? 'decimal' : 'varchar') }));
}

/** The Arrow schema of any warehouse table (declared or grown from the data). */
export async function tableArrowSchema(wh: Warehouse, table: string): Promise<Schema> {
  return new Schema((await tableColumns(wh, table)).map((c) => new Field(c.name, arrowTypeOf(c), true)));
}

function select(c: ColumnSpec): string {
  const q = ident(c.name);
  switch (c.kind) {
    case 'timestamptz':
      return `epoch_ms(${q})::DOUBLE AS ${q}`;
    case 'date':
      return `epoch_ms(${q}::TIMESTAMP)::DOUBLE AS ${q}`;
    case 'decimal':
    case 'json':
      return `${q}::VARCHAR AS ${q}`;
    default:
      return q;
  }
}

function value(kind: ColumnKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof DuckDBListValue) return v.items.map((x) => (kind === 'varchar[]' && x !== null ? String(x) : x));
  return v;
}

/**
 * Hands a table to a caller as Arrow record batches (one per DuckDB chunk of up to 2,048
 * rows), with the table's Arrow schema: the library's format for passing any table on
 * without going through files. Timestamps are UTC microseconds, decimals exact strings.
 */
export async function* tableBatches(wh: Warehouse, table: string, o: { where?: string } = {}): AsyncGenerator<RecordBatch> {
  const cols = await tableColumns(wh, table);
  const schema = await tableArrowSchema(wh, table);
  const result = await wh.db.stream(`SELECT ${cols.map(select).join(', ')} FROM ${ident(table)}${o.where ? ` WHERE ${o.where}` : ''}`);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) return;
    const children: Vector[] = cols.map((c, i) =>
      vectorFromArray(chunk.getColumnValues(i).map((v) => value(c.kind, v)) as unknown[], arrowTypeOf(c)),
    );
    const data = makeData({ type: new Struct(schema.fields), length: chunk.rowCount, nullCount: 0, children: children.map((v) => v.data[0]!) });
    yield new RecordBatch(schema, data);
  }
}
