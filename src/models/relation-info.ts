import type { Warehouse } from '../warehouse/index.js';

/** The tables and views of the main schema, lower-cased, with their kind. */
export async function listRelations(wh: Warehouse): Promise<Map<string, 'table' | 'view'>> {
  const rows = await wh.all<{ name: string; kind: string }>(
    `select lower(table_name) as name, table_type as kind from information_schema.tables where table_schema = 'main'`,
  );
  return new Map(rows.map((r) => [r.name, r.kind === 'VIEW' ? 'view' : 'table']));
}

/** The lower-cased column names of a relation. */
export async function relationColumns(wh: Warehouse, name: string): Promise<Set<string>> {
  const rows = await wh.all<{ c: string }>(
    `select lower(column_name) as c from information_schema.columns where table_schema = 'main' and lower(table_name) = lower(?)`,
    [name],
  );
  return new Set(rows.map((r) => r.c));
}

/** Quotes an identifier for DuckDB. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
