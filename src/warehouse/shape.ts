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
  const seen = new Set<string>();
  walk(value, '', 0, maxDepth, seen);
  return [...seen].sort();
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

function walk(v: unknown, path: string, depth: number, max: number, seen: Set<string>): void {
  const t = letter(v);
  if (path !== '') seen.add(`${path}:${depth > max && (t === 'o' || t === 'a') ? 'j' : t}`);
  if (depth > max) return;
  if (t === 'o') {
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      walk(child, path === '' ? k : `${path}.${k}`, depth + 1, max, seen);
    }
  } else if (t === 'a') {
    for (const child of v as unknown[]) walk(child, `${path}[]`, depth + 1, max, seen);
  }
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
