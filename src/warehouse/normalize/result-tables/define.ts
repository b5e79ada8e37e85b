import type { ResultFormat, ResultKind } from '../../../catalog/index.js';
import type { ColumnKind, ColumnSpec, TableSpec } from '../../columns.js';

/** A catalog result kind a declared kind reads, in one result format only when `format` is set. */
export interface ResultRead {
  resultKind: ResultKind;
  format?: ResultFormat;
}

/**
 * A result kind: the responses it reads, and the tables their rows go to (parent tables
 * first). Declared kinds give stable names and types; fields they do not declare still
 * become columns (generic normalizer), so nothing is dropped.
 */
export interface KindSpec {
  kind: string;
  /** The catalog's `resultKind`s (of the endpoint a response came from) that this kind normalizes. */
  reads?: readonly ResultRead[];
  /**
   * Fallback for responses the catalog's `resultKind` cannot place: paths the catalog does
   * not know, and `.ai` variants (reshaped bodies). Matched against the path without the
   * query string.
   */
  match: RegExp;
  tables: TableSpec[];
  /** A kind with no declaration: its tables exist only once bodies have shown their fields. */
  generic?: boolean;
}

/** Shorthand for a declared column: `c('rank_group', 'int')`, `c('rating_value', 'double', 'rating.value')`. */
export function c(name: string, kind: ColumnKind, path?: string, doc?: string): ColumnSpec {
  return { name, kind, ...(path ? { path } : {}), ...(doc ? { doc } : {}) };
}

/** The task id key of every `/v3` data table. */
export const taskIdKey: ColumnSpec = { name: 'task_id', kind: 'varchar', key: true, path: '$.tasks[].id' };

/** The position of a row in a list of the body (`tasks[].result[]` gives the result's index). */
export function indexKey(name: string, list: string): ColumnSpec {
  return { name, kind: 'int', key: true, index: list };
}

/** The `call_id` of the landed response: the key of `/v1` tables, lineage elsewhere. */
export const callIdKey: ColumnSpec = { name: 'call_id', kind: 'varchar', key: true, source: 'call_id' };

/** A `/v3` data table whose rows are the elements of `rows`. */
export function v3Table(name: string, grain: string, rows: string, keys: ColumnSpec[], columns: ColumnSpec[], partitionBy?: string): TableSpec {
  return { name, grain, rows, replaceKey: 'task_id', columns: [taskIdKey, ...keys, ...columns], ...(partitionBy ? { partitionBy } : {}) };
}

/** Check date of the enclosing result, for partitioning rows by the day they describe. */
export function resultDate(resultList = 'tasks[].result[]', field = 'datetime'): ColumnSpec {
  return { name: 'check_date', kind: 'date', path: `$.${resultList}.${field}`, transform: 'service_date' };
}
