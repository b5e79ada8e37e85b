import { BIGINT, BOOLEAN, INTEGER, LIST, listValue, VARCHAR, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import type { Warehouse } from './warehouse.js';

/** One column of many rows, bound as a typed LIST parameter for `unnest($n)`. */
export class Column {
  constructor(
    readonly values: readonly DuckDBValue[],
    readonly type: DuckDBType,
  ) {}
}

export const varchars = (values: readonly (string | null)[]) => new Column(values, LIST(VARCHAR));
export const integers = (values: readonly (number | null)[]) => new Column(values, LIST(INTEGER));
export const bigints = (values: readonly (bigint | null)[]) => new Column(values, LIST(BIGINT));
export const booleans = (values: readonly (boolean | null)[]) => new Column(values, LIST(BOOLEAN));

/**
 * Runs one statement over many rows passed as columns (`unnest($2::VARCHAR[])`, ...), so a
 * group of rows costs one statement instead of one each. The lists are bound with their
 * types: left to inference, a list whose first value is NULL binds as a list of NULLs.
 */
export async function runColumns(wh: Warehouse, sql: string, params: readonly (DuckDBValue | Column)[]): Promise<void> {
  const values = params.map((p) => (p instanceof Column ? listValue([...p.values]) : p));
  const types = params.map((p) => (p instanceof Column ? p.type : undefined));
  await wh.db.run(sql, values, types as DuckDBType[]);
}
