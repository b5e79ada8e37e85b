import {
  dateValue,
  DuckDBDataChunk,
  listValue,
  timestampTZValue,
  type DuckDBAppender,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { Table } from 'apache-arrow';
import type { ColumnKind, TableSpec } from './columns.js';

const CHUNK_ROWS = 2048;
const MS_PER_DAY = 86_400_000;

/**
 * Appends an Arrow table to a DuckDB appender whose table has the columns of `spec`, in
 * data chunks of DuckDB's vector size. The chunk types come from the appender, so they
 * match the target exactly (appendDataChunk does not cast).
 */
export function appendArrow(appender: DuckDBAppender, spec: TableSpec, table: Table): number {
  const types = spec.columns.map((_, i) => appender.columnType(i));
  const columns = spec.columns.map((c) => {
    const vec = table.getChild(c.name);
    if (!vec) throw new Error(`arrow table lacks column ${c.name}`);
    return { kind: c.kind, vec };
  });
  for (let start = 0; start < table.numRows; start += CHUNK_ROWS) {
    const n = Math.min(CHUNK_ROWS, table.numRows - start);
    const chunk = DuckDBDataChunk.create(types, n);
    chunk.setColumns(
      columns.map(({ kind, vec }) => {
        const out: DuckDBValue[] = new Array(n);
        for (let i = 0; i < n; i++) out[i] = toDuck(kind, vec.get(start + i));
        return out;
      }),
    );
    appender.appendDataChunk(chunk);
  }
  appender.flushSync();
  return table.numRows;
}

function toDuck(kind: ColumnKind, v: unknown): DuckDBValue {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'timestamptz':
      return timestampTZValue(BigInt(v as number) * 1000n);
    case 'date':
      return dateValue(Math.floor((v as number) / MS_PER_DAY));
    case 'varchar[]': {
      const arr = (v as { toArray(): unknown[] }).toArray();
      return listValue(arr.map((x) => (x === null || x === undefined ? null : String(x))));
    }
    default:
      return v as DuckDBValue;
  }
}
