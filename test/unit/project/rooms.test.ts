import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSync } from '@swc/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * The rooms of the house (issue 47): no file in src/ over 400 lines and no function over 80.
 * Every `src/**\/*.ts` is parsed with swc; a function is a declaration, a function expression,
 * an arrow, a class or object method, a getter, a setter or a constructor.
 *
 * A function's length is its whole text, first line to last, nested functions included: a
 * function that holds a 60-line callback is read as the 100 lines it is, and the callback is
 * measured again on its own. So a nested function counts toward itself and toward every
 * function around it; splitting the outer function means moving the inner one out, which is
 * what a reader of the outer function needs.
 *
 * Hand-written data tables are the exceptions, each listed below with its reason. An exception
 * that no longer exceeds its limit fails too, so the list only shrinks.
 */

const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;

interface Exception {
  /** Path from the repository root, with `/`. */
  file: string;
  /** The function as reported (see `measure`); absent: the file's own length is excepted. */
  fn?: string;
  why: string;
}

/**
 * The hand-written data tables allowed past a limit, each with its reason. A table earns a
 * place here only when it is data a reader looks up row by row (the emulator's spec tables in
 * src/sandbox/spec, the client's catalog in src/catalog), never code. None is needed today: the
 * largest, src/sandbox/spec/endpoints.ts and src/sandbox/spec/limits.ts, are under 400 lines,
 * and no table is built inside a function. Add an entry as
 * `{ file: 'src/sandbox/spec/endpoints.ts', why: 'the spec's endpoint table, one row per endpoint, each citing its section' }`.
 */
const EXCEPTIONS: Exception[] = [];

const root = fileURLToPath(new URL('../../../', import.meta.url));

const FUNCTION_TYPES = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ClassMethod',
  'PrivateMethod',
  'Constructor',
  'MethodProperty',
  'GetterProperty',
  'SetterProperty',
]);

type Node = { type?: string; span?: { start: number; end: number }; [k: string]: unknown };

interface FunctionLength {
  /** The function's name as a reader finds it: `Class.method`, the variable or key it is bound to, or `(anonymous)`. */
  name: string;
  /** Its first line (1-based). */
  line: number;
  lines: number;
}

function keyName(key: unknown): string | undefined {
  const k = key as Node | undefined;
  if (!k) return undefined;
  if (typeof k.value === 'string' || typeof k.value === 'number') return String(k.value);
  if (k.type === 'PrivateName') return `#${(k.id as Node | undefined)?.value as string}`;
  if (k.type === 'Computed') return '[computed]';
  return undefined;
}

/** What a callee is called, for naming the callback passed to it (`new Promise` → `Promise`). */
function calleeName(callee: unknown): string | undefined {
  const c = callee as Node | undefined;
  if (!c) return undefined;
  if (c.type === 'Identifier') return c.value as string;
  if (c.type === 'MemberExpression') return keyName(c.property);
  return undefined;
}

/**
 * The lines of a TypeScript module and the length of each function in it. swc's spans are
 * UTF-8 byte offsets from 1 in each `parseSync`'s own source file; the self-test below pins
 * the line numbers, so a change there shows.
 */
function measure(text: string): { lines: number; functions: FunctionLength[] } {
  const bytes = Buffer.from(text, 'utf8');
  // Byte offset of the start of each line.
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) starts.push(i + 1);
  const lineOf = (pos: number): number => {
    const off = pos - 1;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= off) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const lines = text.endsWith('\n') ? starts.length - 1 : starts.length;

  const functions: FunctionLength[] = [];
  const ast = parseSync(text, { syntax: 'typescript', target: 'es2022' });
  const walk = (value: unknown, hint: string | undefined, owner: string | undefined): void => {
    if (!value || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value) walk(v, hint, owner);
      return;
    }
    const node = value as Node;
    const t = node.type;
    let childHint = hint;
    let childOwner = owner;
    if (t && FUNCTION_TYPES.has(t) && node.span) {
      const own = (node.identifier as Node | undefined)?.value as string | undefined;
      const key = keyName(node.key);
      const base = own ?? key ?? (t === 'Constructor' ? 'constructor' : hint) ?? '(anonymous)';
      const name = owner && (key !== undefined || t === 'Constructor') ? `${owner}.${base}` : base;
      const line = lineOf(node.span.start);
      functions.push({ name, line, lines: lineOf(node.span.end) - line + 1 });
      childHint = undefined;
    } else if (t === 'ClassDeclaration' || t === 'ClassExpression') {
      childOwner = ((node.identifier as Node | undefined)?.value as string | undefined) ?? hint ?? '(class)';
    } else if (t === 'VariableDeclarator') {
      childHint = ((node.id as Node | undefined)?.value as string | undefined) ?? hint;
    } else if (t === 'KeyValueProperty' || t === 'ClassProperty' || t === 'PrivateProperty') {
      childHint = keyName(node.key) ?? hint;
    } else if (t === 'CallExpression' || t === 'NewExpression') {
      const callee = calleeName(node.callee);
      childHint = callee ? `${callee} callback` : hint;
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'span') walk(v, childHint, childOwner);
  };
  walk(ast.body, undefined, undefined);
  return { lines, functions };
}

/** Each `file: ...` over a limit, excepted ones left out; files are paths from `base` with `/`. */
function offenders(base: string, files: readonly { path: string; text: string }[], exceptions: readonly Exception[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    const rel = relative(base, f.path).split(sep).join('/');
    const m = measure(f.text);
    if (m.lines > MAX_FILE_LINES && !exceptions.some((e) => e.file === rel && e.fn === undefined))
      out.push(`${rel}: ${m.lines} lines (over ${MAX_FILE_LINES})`);
    for (const fn of m.functions) {
      if (fn.lines <= MAX_FUNCTION_LINES) continue;
      if (exceptions.some((e) => e.file === rel && e.fn === fn.name)) continue;
      out.push(`${rel}:${fn.line} ${fn.name}: ${fn.lines} lines (over ${MAX_FUNCTION_LINES})`);
    }
  }
  return out;
}

async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await tsFiles(p)));
    else if (entry.name.endsWith('.ts')) out.push(p);
  }
  return out.sort();
}

async function read(paths: readonly string[]): Promise<{ path: string; text: string }[]> {
  return Promise.all(paths.map(async (path) => ({ path, text: await readFile(path, 'utf8') })));
}

describe('rooms: no file in src/ over 400 lines, no function over 80', () => {
  it('holds for every src/**/*.ts, the listed data tables excepted', async () => {
    const files = await read(await tsFiles(join(root, 'src')));
    expect(offenders(root, files, EXCEPTIONS)).toEqual([]);
  });

  it('every exception is still over its limit (the list only shrinks)', async () => {
    const stale: string[] = [];
    for (const e of EXCEPTIONS) {
      const m = measure(await readFile(join(root, e.file), 'utf8'));
      const over = e.fn === undefined ? m.lines > MAX_FILE_LINES : m.functions.some((f) => f.name === e.fn && f.lines > MAX_FUNCTION_LINES);
      if (!over) stale.push(`${e.file}${e.fn ? ` ${e.fn}` : ''}`);
    }
    expect(stale).toEqual([]);
  });

  describe('can fail', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'rooms-'));
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');

    it('reports a 90-line function, a long method and a long nested arrow, and a file over 400 lines', async () => {
      const text = [
        "// a leading comment, and a non-ASCII 'é' so byte offsets differ from characters",
        `export function ninety(): void {\n${body(88)}\n}`, // lines 2-91: 90 lines
        `class Box {\n  open(): void {\n${body(81)}\n  }\n}`, // the method: lines 93-175, 83 lines
        `export const outer = () => {\n  const inner = () => {\n${body(85)}\n  };\n  return inner;\n};`, // outer 177-266, inner 178-264
        `export function eightyOne(): number {\n${body(78)}\n  return 1;\n}`, // 81 lines
        body(60),
      ].join('\n');
      const path = join(dir, 'long.ts');
      await writeFile(path, text);
      const found = offenders(dir, await read([path]), []);
      expect(found).toEqual([
        'long.ts: 407 lines (over 400)',
        'long.ts:2 ninety: 90 lines (over 80)',
        'long.ts:93 Box.open: 83 lines (over 80)',
        'long.ts:177 outer: 90 lines (over 80)',
        'long.ts:178 inner: 87 lines (over 80)',
        'long.ts:267 eightyOne: 81 lines (over 80)',
      ]);
    });

    it('passes a function of exactly 80 lines, and an excepted one', async () => {
      const path = join(dir, 'ok.ts');
      await writeFile(path, `export function eighty(): void {\n${body(78)}\n}\nexport function table(): void {\n${body(100)}\n}\n`);
      expect(offenders(dir, await read([path]), [{ file: 'ok.ts', fn: 'table', why: 'a test' }])).toEqual([]);
      expect(measure(await readFile(path, 'utf8')).functions.find((f) => f.name === 'eighty')?.lines).toBe(80);
    });
  });
});
