/**
 * The shape of a JSON body: every path it holds with the JSON types seen there, e.g.
 * `tasks[].result[].items[].rating.value:f`. Computed once when a body is landed and kept
 * in the raw index, so the loader knows every field (and every type clash) of a batch
 * before DuckDB reads it, and can read it with explicit column types at full speed.
 *
 * Type letters: s string, i integer, f other number, b boolean, n null, o object,
 * a array, j a value below the depth cap (kept whole as JSON).
 */
export type JsonTypeLetter = 's' | 'i' | 'f' | 'b' | 'n' | 'o' | 'a' | 'j';

/** Paths deeper than this many segments are kept whole as JSON (the depth cap). */
export const MAX_DEPTH = 12;

/** The sorted `path:type` entries of a parsed JSON value. */
export function shapeOf(value: unknown, maxDepth = MAX_DEPTH): string[] {
  const root: Node = { types: new Set(), keys: null, items: null };
  walk(value, root, 0, maxDepth);
  const out: string[] = [];
  collect(root, '', out);
  return out.sort();
}

/**
 * One path of the shape: the types seen there, and its children. The walk goes down this
 * tree with a map lookup per key and builds each path's string once at the end: building
 * and hashing a string per value was most of landing a body's CPU.
 */
interface Node {
  types: Set<JsonTypeLetter>;
  keys: Map<string, Node> | null;
  items: Node | null;
}

function child(): Node {
  return { types: new Set(), keys: null, items: null };
}

function letter(v: unknown): JsonTypeLetter {
  if (v === null) return 'n';
  switch (typeof v) {
    case 'string':
      return 's';
    case 'boolean':
      return 'b';
    case 'number':
      return Number.isInteger(v) ? 'i' : 'f';
    default:
      return Array.isArray(v) ? 'a' : 'o';
  }
}

/** Records `v`'s type at `node` (at `depth`; below the cap an object or array is `j`, kept whole) and walks its children. */
function walk(v: unknown, node: Node, depth: number, max: number): void {
  const t = letter(v);
  node.types.add(depth > max && (t === 'o' || t === 'a') ? 'j' : t);
  if (depth > max) return;
  if (t === 'o') {
    const keys = (node.keys ??= new Map());
    for (const k in v as Record<string, unknown>) {
      if (!Object.hasOwn(v as object, k)) continue;
      let c = keys.get(k);
      if (!c) keys.set(k, (c = child()));
      walk((v as Record<string, unknown>)[k], c, depth + 1, max);
    }
  } else if (t === 'a') {
    const arr = v as unknown[];
    if (arr.length === 0) return;
    const c = (node.items ??= child());
    for (const x of arr) walk(x, c, depth + 1, max);
  }
}

/** The `path:type` entries under `node` (the root itself has no entry). */
function collect(node: Node, path: string, out: string[]): void {
  if (path !== '') for (const t of node.types) out.push(`${path}:${t}`);
  if (node.keys) for (const [k, c] of node.keys) collect(c, path === '' ? k : `${path}.${k}`, out);
  if (node.items) collect(node.items, `${path}[]`, out);
}

/** A merged shape: path to the set of type letters seen there. */
export type ShapeMap = Map<string, Set<JsonTypeLetter>>;

/** Merges `path:type` entries (from many bodies) into one map. */
export function mergeShapes(entries: Iterable<string>): ShapeMap {
  const out: ShapeMap = new Map();
  for (const e of entries) {
    const cut = e.lastIndexOf(':');
    const path = e.slice(0, cut);
    const t = e.slice(cut + 1) as JsonTypeLetter;
    let set = out.get(path);
    if (!set) out.set(path, (set = new Set()));
    set.add(t);
  }
  return out;
}
