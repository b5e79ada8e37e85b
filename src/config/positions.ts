import { readFile } from 'node:fs/promises';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';

/** A path into the parsed data, as zod reports it: keys and list indexes. */
export type DataPath = ReadonlyArray<PropertyKey>;

/** 1-based line and column of a place in the file. */
export interface Position {
  line: number;
  column: number;
}

/** `['jobs', 0, 'keywords', 3]` → `jobs[0].keywords[3]`, the way users read a field. */
export function fieldPath(path: DataPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** The text a YAML map key stands for once the document becomes data (how `toJS` keys objects). */
export function keyText(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

/**
 * Where a data path sits in the file. Walks the YAML nodes down the path and stops at
 * the deepest node that exists, so a missing field points at the mapping it is missing
 * from. With `key: true` the last step points at the key itself (for unknown fields).
 */
export function locate(doc: Document, lines: LineCounter, path: DataPath, opts: { key?: boolean } = {}): Position {
  let node: unknown = doc.contents;
  let offset = rangeStart(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    node = resolve(doc, node);
    const step = path[i];
    const last = i === path.length - 1;
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(step));
      if (!pair) break;
      if (last && opts.key) {
        offset = rangeStart(pair.key) ?? offset;
        break;
      }
      next = pair.value ?? pair.key;
    } else if (isSeq(node) && typeof step === 'number') {
      next = node.items[step];
    }
    const start = rangeStart(next);
    if (start === undefined) break;
    node = next;
    offset = start;
  }
  const { line, col } = lines.linePos(offset);
  return { line, column: col };
}

function resolve(doc: Document, node: unknown): unknown {
  return isAlias(node) ? (node.resolve(doc) ?? node) : node;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}

/**
 * Finds data paths in a pipeline file read again (for errors found after parsing, by a check
 * against the service's lists), when it can be read.
 */
export async function positionsIn(file: string): Promise<((path: DataPath) => Position) | undefined> {
  try {
    const lines = new LineCounter();
    const doc = parseDocument(await readFile(file, 'utf8'), { lineCounter: lines });
    return (path) => locate(doc, lines, path);
  } catch {
    return undefined;
  }
}
