import type { ColumnKind, ColumnSpec, TableSpec } from '../columns.js';
import { snake, type KindSpec } from './result-tables/index.js';
import type { JsonTypeLetter, ShapeMap } from './shape.js';

/** A column as the loader reads it: where it comes from and whether it needs a variant. */
export interface PlanColumn extends ColumnSpec {
  /** Absolute path from the body root (`tasks[].result[].keyword`), for path columns. */
  abs?: string;
  /** Set when some value of this batch does not fit `kind`: those go to `<name>__v`. */
  variant?: string;
  declared: boolean;
}

export interface TablePlan {
  name: string;
  kind: string;
  grain: string;
  rows: string;
  replaceKey: string;
  partitionBy?: string;
  columns: PlanColumn[];
  /**
   * Paths this load reads as JSON rather than typed (looseContainers): a container the table
   * reads through (an object above a column, a list it unnests) where some body of the batch
   * holds another type. Computed for each load from its bodies; never stored.
   */
  loose?: string[];
}

/** A column the batch adds to the warehouse (ALTER TABLE, or a new child table). */
export interface NewColumn {
  table: string;
  column: PlanColumn;
}

/** What one load of a kind does: its tables with every column, and what is new. */
export interface KindPlan {
  kind: string;
  tables: TablePlan[];
  added: NewColumn[];
  createdTables: string[];
}

/** A column of a data table as the warehouse remembers it (`schema_columns`). */
export interface StoredColumn {
  table_name: string;
  column_name: string;
  result_kind: string;
  /** JSON of `{ table: TablePlan without columns, column: PlanColumn }`. */
  spec: string;
}

const ALLOWED: Record<ColumnKind, ReadonlySet<JsonTypeLetter>> = {
  varchar: new Set(['s']),
  int: new Set(['i']),
  bigint: new Set(['i']),
  double: new Set(['i', 'f']),
  decimal: new Set(['i', 'f']),
  bool: new Set(['b']),
  timestamptz: new Set(['s']),
  date: new Set(['s']),
  json: new Set(['s', 'i', 'f', 'b', 'o', 'a', 'j']),
  'varchar[]': new Set(['a']),
  'bigint[]': new Set(['a']),
  'double[]': new Set(['a']),
};
const ELEMENT: Partial<Record<ColumnKind, ReadonlySet<JsonTypeLetter>>> = {
  'varchar[]': new Set(['s']),
  'bigint[]': new Set(['i']),
  'double[]': new Set(['i', 'f']),
};

/** The absolute body path of a column of a table whose rows are at `rows`. */
export function absolutePath(rows: string, c: ColumnSpec): string | undefined {
  if (c.index || c.source) return undefined;
  const p = c.path ?? c.name;
  if (p.startsWith('$.')) return p.slice(2);
  return rows === '' ? p : `${rows}.${p}`;
}

function seen(shape: ShapeMap, path: string): Set<JsonTypeLetter> {
  const s = new Set(shape.get(path) ?? []);
  s.delete('n');
  return s;
}

function fits(kind: ColumnKind, shape: ShapeMap, abs: string): boolean {
  const t = seen(shape, abs);
  for (const x of t) if (!ALLOWED[kind].has(x)) return false;
  const el = ELEMENT[kind];
  if (el) for (const x of seen(shape, `${abs}[]`)) if (!el.has(x)) return false;
  return true;
}

function inferKind(shape: ShapeMap, abs: string): ColumnKind | 'object' | 'child' | null {
  const t = seen(shape, abs);
  if (t.size === 0) return null;
  if (t.size === 1 && t.has('o')) return 'object';
  if (t.has('o') || t.has('j') || t.size > 2) return 'json';
  if (t.size === 1 && t.has('a')) {
    const el = seen(shape, `${abs}[]`);
    if (el.size === 0) return null;
    if (el.size === 1 && el.has('o')) return 'child';
    if ([...el].every((x) => x === 's')) return 'varchar[]';
    if ([...el].every((x) => x === 'i')) return 'bigint[]';
    if ([...el].every((x) => x === 'i' || x === 'f')) return 'double[]';
    return 'json';
  }
  if (t.has('a')) return 'json';
  if ([...t].every((x) => x === 'i')) return 'bigint';
  if ([...t].every((x) => x === 'i' || x === 'f')) return 'double';
  if (t.size === 1 && t.has('s')) return 'varchar';
  if (t.size === 1 && t.has('b')) return 'bool';
  return 'json';
}

function fromSpec(t: TableSpec, kind: string, declared: boolean): TablePlan {
  const rows = t.rows ?? '';
  return {
    name: t.name,
    kind,
    grain: t.grain,
    rows,
    replaceKey: t.replaceKey ?? 'task_id',
    ...(t.partitionBy ? { partitionBy: t.partitionBy } : {}),
    columns: t.columns.map((c) => ({ ...c, declared, ...(absolutePath(rows, c) ? { abs: absolutePath(rows, c)! } : {}) })),
  };
}

/**
 * Resolves the tables of a kind for a batch with the merged `shape` of its bodies, in
 * dlt's relational style: declared columns keep their names and types; every other field
 * under a table's rows becomes a column named by its path (`a__b`, snake_case); lists of
 * objects become child tables `<table>__<field>` keyed by the parent's keys and the list
 * index; lists of scalars become list columns; fields only ever null add nothing. A value
 * whose type does not fit its column goes to the variant column `<name>__v` (JSON); a
 * number written as a string still lands in its numeric column (sql-build.ts).
 */
export function planKind(spec: KindSpec, stored: readonly StoredColumn[], shape: ShapeMap): KindPlan {
  const tables = new Map<string, TablePlan>();
  for (const t of spec.tables) tables.set(t.name, fromSpec(t, spec.kind, true));
  for (const s of stored) {
    if (s.result_kind !== spec.kind) continue;
    const { table, column } = JSON.parse(s.spec) as { table: Omit<TablePlan, 'columns'>; column: PlanColumn };
    let t = tables.get(s.table_name);
    if (!t) tables.set(s.table_name, (t = { ...table, loose: undefined, columns: [] }));
    if (!t.columns.some((c) => c.name === column.name)) t.columns.push({ ...column, declared: false });
  }
  const plan: KindPlan = { kind: spec.kind, tables: [], added: [], createdTables: [] };
  const root = spec.tables[0];
  if (spec.generic && root && !stored.some((s) => s.table_name === root.name)) {
    plan.createdTables.push(root.name);
    for (const c of tables.get(root.name)!.columns) plan.added.push({ table: root.name, column: c });
  }
  const queue = [...tables.values()];
  const rowsPaths = new Set(queue.map((t) => t.rows));
  while (queue.length > 0) {
    const t = queue.shift()!;
    plan.tables.push(t);
    discover(t, shape, rowsPaths, plan, queue);
    for (const c of t.columns) {
      if (!c.abs || c.variant || c.name.endsWith('__v')) continue;
      if (!fits(c.kind, shape, c.abs)) {
        const v = `${c.name}__v`;
        c.variant = v;
        if (!t.columns.some((x) => x.name === v)) {
          const vc: PlanColumn = { name: v, kind: 'json', declared: false, variant: undefined, doc: `values of ${c.name} that are not ${c.kind}` };
          t.columns.push(vc);
          plan.added.push({ table: t.name, column: { ...vc, path: `(variant of ${c.name})` } });
        }
      }
    }
  }
  for (const t of plan.tables) {
    const loose = looseContainers(t, shape);
    if (loose.length > 0) t.loose = loose;
  }
  return plan;
}

/**
 * The containers a table reads through that some body of the batch (`shape`) holds as another
 * type: a field read as an object (a parent of columns `a__b`) that is a string or a list
 * tonight, a list the table unnests (its rows, or one above them) that is an object, or list
 * elements read as objects that are strings. Also a path that is both a column and the parent
 * of another. The load reads each as JSON (sql-build.ts): the columns at or below it take
 * only values of their own type, and a list that is no list gives no rows. Without this, a
 * field that changed type since an earlier night (its columns are stored) failed the whole
 * night's load: DuckDB's typed read refuses a value that is not the type it was told.
 * None of the paths returned is under another.
 */
export function looseContainers(t: TablePlan, shape: ShapeMap): string[] {
  const expected = new Map<string, 'a' | 'o'>();
  const walk = (path: string) => {
    const segs = path.split('.');
    let prefix = '';
    segs.forEach((seg, i) => {
      const m = /^(.*?)((?:\[\])*)$/.exec(seg)!;
      prefix = prefix === '' ? m[1]! : `${prefix}.${m[1]!}`;
      for (let l = 0; l < m[2]!.length / 2; l++) {
        expected.set(prefix, 'a');
        prefix += '[]';
      }
      if (i < segs.length - 1) expected.set(prefix, 'o');
    });
  };
  if (t.rows !== '') walk(t.rows);
  const leaves = new Set<string>();
  for (const c of t.columns) {
    if (!c.abs) continue;
    walk(c.abs);
    leaves.add(c.abs);
  }
  const loose = [...expected]
    .filter(([path, want]) => leaves.has(path) || [...seen(shape, path)].some((x) => x !== want))
    .map(([path]) => path)
    .sort();
  return loose.filter((p) => !loose.some((q) => q !== p && under(p, q)));
}

/** Whether `path` is `top` or below it (a field of it, or its list's elements). */
export function under(path: string, top: string): boolean {
  return path === top || path.startsWith(`${top}.`) || path.startsWith(`${top}[`);
}

function discover(t: TablePlan, shape: ShapeMap, rowsPaths: Set<string>, plan: KindPlan, queue: TablePlan[]): void {
  const prefix = t.rows === '' ? '' : `${t.rows}.`;
  const taken = new Set(t.columns.map((c) => c.name));
  const covered = new Set(t.columns.flatMap((c) => (c.abs ? [c.abs] : [])));
  const wholeJson = t.columns.filter((c) => c.abs && c.kind === 'json').map((c) => `${c.abs}.`);
  for (const path of [...shape.keys()].sort()) {
    if (!path.startsWith(prefix) || path === t.rows) continue;
    const rel = path.slice(prefix.length);
    if (rel.includes('[]') || covered.has(path)) continue;
    if (wholeJson.some((w) => path.startsWith(w)) || [...covered].some((c) => path.startsWith(`${c}.`) || path.startsWith(`${c}[]`))) continue;
    // A field that is some table's rows is read only as those rows. When a body holds another
    // type there (an object, a string), that table reads it as JSON and gives it no rows, and
    // no other table takes it as a column: such a column would hold the whole list as JSON on
    // every later night. The value stays in the raw body.
    if ([...rowsPaths].some((r) => r.endsWith('[]') && (path === r.slice(0, -2) || path.startsWith(`${r.slice(0, -2)}.`)))) continue;
    const kind = inferKind(shape, path);
    if (kind === null || kind === 'object') continue;
    const name = uniqueName(rel.split('.').map(snake).join('__'), taken);
    if (kind === 'child') {
      const rows = `${path}[]`;
      if (rowsPaths.has(rows)) continue;
      rowsPaths.add(rows);
      const child: TablePlan = {
        name: `${t.name}__${name}`.slice(0, 120),
        kind: t.kind,
        grain: `one row per element of ${rel} of a ${t.name} row`,
        rows,
        replaceKey: t.replaceKey,
        columns: [
          ...t.columns.filter((c) => c.key).map((c) => ({ ...c, declared: false })),
          { name: `${snake(rel.split('.').pop()!)}_index`, kind: 'int' as const, key: true, index: rows, declared: false },
        ],
      };
      plan.createdTables.push(child.name);
      for (const col of child.columns) plan.added.push({ table: child.name, column: col });
      queue.push(child);
      continue;
    }
    const col: PlanColumn = { name, kind, path: rel, abs: path, declared: false };
    t.columns.push(col);
    covered.add(path);
    plan.added.push({ table: t.name, column: col });
  }
}

function uniqueName(name: string, taken: Set<string>): string {
  let n = name.slice(0, 100);
  for (let i = 2; taken.has(n); i++) n = `${name.slice(0, 96)}_${i}`;
  taken.add(n);
  return n;
}
