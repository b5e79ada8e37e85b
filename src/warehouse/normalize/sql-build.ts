import { ident, sqlType, type ColumnKind } from '../columns.js';
import { under, type PlanColumn, type TablePlan } from './table-plan.js';

/** How DuckDB's JSON reader takes a column's value from the body. */
function readType(c: PlanColumn): string {
  if (c.variant || c.kind === 'json') return 'JSON';
  if (c.transform) return 'VARCHAR';
  switch (c.kind) {
    case 'int':
      return 'BIGINT';
    case 'decimal':
      return 'DOUBLE';
    default:
      return sqlType(c.kind);
  }
}

interface Node {
  leaf?: string;
  fields: Map<string, Node>;
}

function segments(path: string): { name: string; lists: number }[] {
  return path.split('.').map((s) => {
    const m = /^(.*?)((?:\[\])*)$/.exec(s)!;
    return { name: m[1]!, lists: m[2]!.length / 2 };
  });
}

function insert(root: Node, path: string, leaf: string | undefined): void {
  let node = root;
  const segs = segments(path);
  segs.forEach((s, i) => {
    let next = node.fields.get(`${s.name}\u0000${s.lists}`);
    if (!next) node.fields.set(`${s.name}\u0000${s.lists}`, (next = { fields: new Map() }));
    if (i === segs.length - 1 && leaf) next.leaf = leaf;
    node = next;
  });
}

function typeOf(n: Node): string {
  if (n.leaf) return n.leaf;
  // Rows whose table reads no field of them (only the keys above and the list index): any value.
  if (n.fields.size === 0) return 'JSON';
  const byName = new Map<string, string>();
  for (const [key, child] of n.fields) {
    const [name, lists] = key.split('\u0000') as [string, string];
    byName.set(name, `${ident(name)} ${typeOf(child)}${'[]'.repeat(Number(lists))}`);
  }
  return `STRUCT(${[...byName.values()].join(', ')})`;
}

/**
 * The explicit DuckDB type of the `envelope` column: every field the given tables need,
 * typed, so DuckDB's JSON reader builds the columns directly (auto-detection and JSON
 * strings cost about twice as much).
 */
export function envelopeType(tables: readonly TablePlan[]): string {
  const root = envelopeTree(tables);
  if (root.fields.size === 0) return 'JSON';
  return typeOf(root);
}

/**
 * The same fields as {@link envelopeType}, as the JSON structure of DuckDB's `from_json`: for
 * a body held as JSON text (`raw_heads`), which a cast to the type would refuse for every key
 * it does not name.
 */
export function envelopeStructure(tables: readonly TablePlan[]): string {
  const root = envelopeTree(tables);
  return JSON.stringify(root.fields.size === 0 ? 'JSON' : structureOf(root));
}

function envelopeTree(tables: readonly TablePlan[]): Node {
  const root: Node = { fields: new Map() };
  for (const t of tables) {
    // A path at or below one the load reads as JSON (TablePlan.loose) is read with it, whole.
    const add = (path: string, leaf: string | undefined) => {
      const top = t.loose?.find((l) => under(path, l));
      insert(root, top ?? path, top ? 'JSON' : leaf);
    };
    if (t.rows !== '') add(t.rows, undefined);
    for (const c of t.columns) if (c.abs) add(c.abs, readType(c));
  }
  return root;
}

function structureOf(n: Node): unknown {
  if (n.leaf) return n.leaf;
  const o: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [key, child] of n.fields) {
    const [name, lists] = key.split('\u0000') as [string, string];
    let v = structureOf(child);
    for (let i = 0; i < Number(lists); i++) v = [v];
    o[name] = v;
  }
  return o;
}

function access(base: string, rel: string): string {
  if (rel === '') return base;
  return rel.split('.').reduce((acc, s) => `${acc}.${ident(s)}`, base);
}

const JSON_OK: Partial<Record<ColumnKind, string>> = {
  varchar: `('VARCHAR')`,
  int: `('BIGINT', 'UBIGINT')`,
  bigint: `('BIGINT', 'UBIGINT')`,
  double: `('BIGINT', 'UBIGINT', 'DOUBLE')`,
  bool: `('BOOLEAN')`,
  timestamptz: `('VARCHAR')`,
  date: `('VARCHAR')`,
};

/**
 * A column's value from what was read (`v`). A variant column's, or one read from JSON (`json`:
 * at or below a path the load reads as JSON, TablePlan.loose), is taken only when its JSON type
 * fits; a variant's other values go to its variant column, the others' are null.
 */
function finalExpr(c: PlanColumn, v: string, json = false): string {
  const T = sqlType(c.kind);
  // The service's time (`2026-11-20 08:15:02 +00:00`); else ISO 8601 (`2026-11-20T08:15:02Z`),
  // which a body may hold as well: without it the row had no check date, and a night's model
  // tests failed on it.
  const time = (x: string) => `coalesce(try_strptime(${x}, '%Y-%m-%d %H:%M:%S %z'), TRY_CAST(${x} AS TIMESTAMPTZ))`;
  const fromText = (x: string) =>
    c.transform === 'service_time' ? time(x) : c.transform === 'service_date' ? `CAST(${time(x)} AS DATE)` : `CAST(${x} AS ${T})`;
  // An integer beyond INTEGER (a rank of 3,000,000,000) is null, not the end of the night's load.
  if (!c.variant && !json) return c.transform ? fromText(v) : c.kind === 'int' ? `TRY_CAST(${v} AS INTEGER)` : v;
  const ok = JSON_OK[c.kind];
  // A number written as a string ("12", "4.5": real SERP bodies have them) lands in its
  // numeric column; a string that is no number goes to the variant column.
  const numeric = c.kind === 'int' || c.kind === 'bigint' || c.kind === 'double' ? ` WHEN json_type(${v}) = 'VARCHAR' THEN TRY_CAST(trim(${v} ->> '$') AS ${T})` : '';
  if (ok) return `CASE WHEN json_type(${v}) IN ${ok} THEN ${fromText(`(${v} ->> '$')`)}${numeric} END`;
  return `TRY_CAST(${v} AS ${T})`;
}

export interface SelectOptions {
  /** Extra condition on the landed line (`call_id IN (...)`). */
  where?: string;
  /** Keep only rows of these (call, task) pairs: the newest response of each task. */
  pickTable?: string;
}

/**
 * The SELECT that turns landed lines into a table's rows, given the source of the lines
 * (`read_json(...)` of the files to read, or the heads as JSON): DuckDB reads each line with the
 * table's explicit envelope type, unnests down the table's rows path (keeping each list's index)
 * and casts each column. No value passes through JavaScript. Built ahead of its source: the load
 * builds each table's SELECT as it plans the kind, and gives it the files when it has them. The
 * source gives `call_id`, `run_id`, `received_at` (the landed line's) and `body`.
 */
export function selectRowsFrom(t: TablePlan, o: SelectOptions): (source: string) => string {
  const levels = t.rows === '' ? [] : listPrefixes(t.rows);
  const cols = t.columns.filter((c) => c.abs || c.index || c.source);
  const levelOf = levelFinder(levels);
  const exprAt = exprFinder(levels);
  const names = new Map(cols.map((c, i) => [c, `_c${i}`]));
  // Read as JSON: at or below a container some body holds as another type (TablePlan.loose).
  const jsonAt = (path: string) => t.loose?.some((l) => under(path, l)) ?? false;
  // A date key (service_date) the body does not hold, or holds as no time, is the UTC day the
  // answer was received: the data's own date where it has one, the day it came otherwise (a
  // SERP result without \`datetime\` had no check date, and a night's model tests failed on it).
  const dated = cols.some((c) => c.transform === 'service_date');
  const read = (c: PlanColumn, v: string) => finalExpr(c, v, c.abs !== undefined && jsonAt(c.abs));
  const fin = (c: PlanColumn, v: string) => {
    const e = read(c, v);
    return c.transform === 'service_date' ? `coalesce(${e}, CAST(TRY_CAST(_recv AS TIMESTAMPTZ) AS DATE))` : e;
  };
  // A value read above the rows level (a result's date, the list indexes) is cast once where
  // it is read, not once per row after the unnest: a SERP result's \`datetime\` is parsed once,
  // not for each of its hundred items (in a step of its own, m<k> below). Variant columns keep
  // the raw value to the end.
  const early = new Set(cols.filter((c) => !c.variant && (c.index || levelOf(c) < levels.length)));
  const cast = (c: PlanColumn, e: string) => (early.has(c) ? fin(c, e) : e);
  const ctes: string[] = [];
  // Only the picked (call, task) pairs give rows. The condition is put where the task id is read,
  // before the lists below it are unnested: one lookup in \`_pick\` per answer's task, not one
  // per item.
  const task = cols.find((c) => c.name === 'task_id');
  const taskLevel = task ? levelOf(task) : -1;
  const whereAt = (k: number): string => {
    const conds: string[] = [];
    if (o.pickTable && task && k === taskLevel) {
      const e = exprAt(task, k);
      conds.push(`(_call, ${early.has(task) ? cast(task, e) : fin(task, e)}) IN (SELECT call_id, task_id FROM ${o.pickTable})`);
    }
    // Elements of a list read as JSON: only objects are rows (a string among a SERP's items is none).
    if (k > 0 && jsonAt(levels[k - 1]!)) conds.push(`json_type(u${k}) = 'OBJECT'`);
    return conds.length === 0 ? '' : ` WHERE ${conds.join(' AND ')}`;
  };
  // The day received goes down the levels only as far as a date key is cast (for SERP items, to
  // the results' level, not into each of their hundred items); to the end when one is cast there.
  const recvUntil = Math.max(-1, ...cols.filter((c) => c.transform === 'service_date').map((c) => (early.has(c) ? levelOf(c) : Infinity)));
  const passOn = (names: string[], k: number) => (k <= recvUntil ? names : names.filter((n) => n !== '_recv'));
  let carried: string[] = ['_call', '_run', ...(dated ? ['_recv'] : [])];
  for (let k = 1; k <= levels.length; k++) {
    carried = passOn(carried, k);
    const prev = k === 1 ? 'src' : `l${k - 1}`;
    const parentBase = k === 1 ? 'u0' : `u${k - 1}`;
    const rel = k === 1 ? levels[0]! : levels[k - 1]!.slice(levels[k - 2]!.length + 1);
    const list = access(parentBase, rel.replace(/\[\]$/, ''));
    // A list read as JSON gives its elements when it is one, and no rows when it is anything else.
    const listExpr = jsonAt(levels[k - 1]!.replace(/\[\]$/, '')) ? `CAST(CASE WHEN json_type(${list}) = 'ARRAY' THEN ${list} END AS JSON[])` : list;
    const here = cols.filter((c) => !c.index && levelOf(c) === k - 1).map((c) => `${cast(c, exprAt(c, k - 1))} AS ${names.get(c)}`);
    const index = (at: string) => cols.filter((c) => c.index === levels[k - 1]).map((c) => `${cast(c, `(generate_subscripts(${at}, 1) - 1)`)} AS ${names.get(c)}`);
    const step = unnestLevel(k, { prev, carried, here, list: listExpr, where: whereAt(k - 1), index });
    ctes.push(...step.ctes);
    carried = step.carried;
  }
  const last = levels.length;
  const lastFrom = last === 0 ? 'src' : `l${last}`;
  const inner = [
    ...passOn(carried, last + 1),
    ...cols.filter((c) => !c.index && levelOf(c) === last).map((c) => `${exprAt(c, last)} AS ${names.get(c)}`),
  ];
  ctes.push(`f AS (SELECT ${inner.join(', ')} FROM ${lastFrom}${whereAt(last)})`);
  const out: string[] = [];
  for (const c of cols) {
    const v = names.get(c)!;
    out.push(`${early.has(c) ? v : fin(c, v)} AS ${ident(c.name)}`);
    // A value that does not read as the column's type (before a date key's fallback to the day received).
    if (c.variant) out.push(`CASE WHEN ${v} IS NOT NULL AND json_type(${v}) <> 'NULL' AND (${read(c, v)}) IS NULL THEN ${v} END AS ${ident(c.variant)}`);
  }
  const rest = `${ctes.map((c) => `,\n${c}`).join('')}\nSELECT ${out.join(', ')} FROM f`;
  const recv = dated ? ', received_at AS _recv' : '';
  return (source) => `WITH src AS (SELECT call_id AS _call, run_id AS _run${recv}, body AS u0 FROM ${source}${o.where ? ` WHERE ${o.where}` : ''})${rest}`;
}

/** The name an `expr AS name` item gives. */
const nameOf = (item: string) => item.split(' AS ').pop()!;

/**
 * The CTEs that unnest the k-th list (`list`, read from `prev` where `where` holds), and the names
 * they carry on. The level's values (`here`, each `expr AS name`) are cast in a step of their own
 * (m<k>) before the list is unnested: in the unnest's own SELECT, DuckDB computes every other
 * expression after the unnest, once per element. A million SERP items: the projection after the
 * items' unnest took 0.29 s of CPU with the results' dates parsed there, 0.07 s (and 0.02 s at the
 * results) without. `index(list)` gives the list's index columns.
 */
function unnestLevel(
  k: number,
  o: { prev: string; carried: readonly string[]; here: readonly string[]; list: string; where: string; index: (list: string) => string[] },
): { ctes: string[]; carried: string[] } {
  const stepped = o.here.length > 0;
  const ctes = stepped ? [`m${k} AS (SELECT ${[...o.carried, ...o.here, `${o.list} AS _l${k}`].join(', ')} FROM ${o.prev}${o.where})`] : [];
  const listAt = stepped ? `_l${k}` : o.list;
  const hereNames = o.here.map(nameOf);
  const idx = o.index(listAt);
  ctes.push(`l${k} AS (SELECT ${[...o.carried, ...hereNames, ...idx, `unnest(${listAt}) AS u${k}`].join(', ')} FROM ${stepped ? `m${k}` : `${o.prev}${o.where}`})`);
  return { ctes, carried: [...o.carried, ...hereNames, ...idx.map(nameOf)] };
}

/** The level a column is read at: 0 in the body, k in an element of the k-th of the rows lists (`levels`). */
function levelFinder(levels: readonly string[]): (c: PlanColumn) => number {
  return (c) => {
    if (c.index) return levels.indexOf(c.index) + 1;
    if (c.source) return 0;
    let best = 0;
    levels.forEach((l, i) => {
      if (c.abs!.startsWith(`${l}.`) || c.abs === l) best = i + 1;
    });
    return best;
  };
}

/** A column's value at a level (levelFinder): the call's or run's id, or a path under that level's element `u<level>`. */
function exprFinder(levels: readonly string[]): (c: PlanColumn, level: number) => string {
  return (c, level) => {
    if (c.source === 'call_id') return '_call';
    if (c.source === 'run_id') return '_run';
    const base = level === 0 ? 'u0' : `u${level}`;
    const rel = level === 0 ? c.abs! : c.abs!.slice(levels[level - 1]!.length + 1);
    return access(base, rel);
  };
}

/** `tasks[].result[].items[]` gives `tasks[]`, `tasks[].result[]`, `tasks[].result[].items[]`. */
function listPrefixes(rows: string): string[] {
  const out: string[] = [];
  const parts = rows.split('.');
  parts.forEach((_, i) => {
    const p = parts.slice(0, i + 1).join('.');
    if (p.endsWith('[]')) out.push(p);
  });
  return out;
}
