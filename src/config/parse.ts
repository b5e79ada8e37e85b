import { isMap, isSeq, LineCounter, parseDocument, type Document, type YAMLError } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { alertsIssues } from './alerts-block.js';
import { expandEnv, type Env } from './env.js';
import { fieldPath, keyText, locate, type DataPath } from './positions.js';
import { ruleErrorMap } from './messages.js';
import { pipelineSchema, type Pipeline } from './schema.js';

/**
 * Parses and validates the text of a pipeline file. Pure (no file system), so tests and
 * editors can call it on a string. Throws one `ConfigError` naming every problem, with
 * its line and column, so the user fixes the file in one pass before any paid call.
 *
 * @param file - only used in the issues, to say which file they are in
 * @param env - fills `${NAME}` references; defaults to `process.env`
 */
export function parsePipeline(text: string, file: string, env: Env = process.env): Pipeline {
  const deep = tooDeep(text);
  if (deep)
    throw new ConfigError([
      {
        file,
        line: deep.line,
        column: deep.column,
        field: '',
        rule: `nested more than ${MAX_DEPTH} levels deep ([ and { inside each other); a pipeline file needs a handful`,
      },
    ]);
  try {
    return parseChecked(text, file, env);
  } catch (err) {
    // Whatever the pre-check missed (deep block nesting): a clear refusal, not a stack trace.
    if (err instanceof RangeError)
      throw new ConfigError([
        { file, line: 1, column: 1, field: '', rule: 'nested too deeply to read; a pipeline file needs a handful of levels' },
      ]);
    throw err;
  }
}

/** Deepest flow nesting (`[` and `{`) accepted. */
const MAX_DEPTH = 64;

/**
 * Where flow collections first nest deeper than {@link MAX_DEPTH}, outside quotes and
 * comments: the YAML parser and everything that walks the document recurse once per level,
 * so 20,000 brackets would end in a stack overflow.
 */
function tooDeep(text: string): { line: number; column: number } | undefined {
  let depth = 0;
  let line = 1;
  let col = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    col++;
    if (ch === '\n') {
      line++;
      col = 0;
      if (quote === null) continue;
    }
    if (quote !== null) {
      if (quote === '"' && ch === '\\') {
        i++;
        col++;
      } else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '#' && (i === 0 || /\s/.test(text[i - 1]!))) {
      while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    } else if (ch === '"' || (ch === "'" && depth > 0)) quote = ch;
    else if (ch === '[' || ch === '{') {
      if (++depth > MAX_DEPTH) return { line, column: col };
    } else if ((ch === ']' || ch === '}') && depth > 0) depth--;
  }
  return undefined;
}

function parseChecked(text: string, file: string, env: Env): Pipeline {
  const lines = new LineCounter();
  // Merge keys (`<<: *shared`) are read as YAML 1.1 defines them: the anchored mapping's
  // keys, overridden by the ones written beside them.
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, merge: true });
  const at = (path: DataPath, field: string, rule: string, key = false): ConfigIssue => ({
    file,
    ...locate(doc, lines, path, { key }),
    field,
    rule,
  });

  const issues: ConfigIssue[] = doc.errors.map((e) => yamlIssue(e, doc, lines, text, file));
  // A broken document parses into guesses; checking the guesses would only add noise.
  if (doc.errors.some((e) => e.code !== 'DUPLICATE_KEY')) throw new ConfigError(sorted(issues));

  if (!isMap(doc.contents)) {
    const rule =
      doc.contents === null
        ? 'the file is empty; a pipeline needs at least name and jobs'
        : `the top level must be a mapping with name and jobs, not ${isSeq(doc.contents) ? 'a list' : 'a single value'}`;
    throw new ConfigError(sorted([...issues, at([], '', rule)]));
  }

  const envIssues = expandEnv(doc, env);
  issues.push(...envIssues.map((i) => at(i.path, fieldPath(i.path), i.rule)));
  const envFields = new Set(envIssues.map((i) => fieldPath(i.path)));

  let data: unknown;
  try {
    data = doc.toJS();
  } catch (err) {
    issues.push(at([], '', err instanceof Error ? err.message : String(err)));
    throw new ConfigError(sorted(issues));
  }

  const result = pipelineSchema.safeParse(data, { error: ruleErrorMap });
  for (const i of alertsIssues(data, env)) issues.push(at(i.path, fieldPath(i.path), i.rule));
  if (result.success && issues.length === 0) return result.data;
  for (const issue of result.success ? [] : result.error.issues) {
    for (const found of schemaIssues(issue, at)) {
      // The missing variable is the problem; the unexpanded `${NAME}` failing a rule is noise.
      if (![...envFields].some((f) => found.field === f || found.field.startsWith(`${f}.`) || found.field.startsWith(`${f}[`))) {
        issues.push(found);
      }
    }
  }
  throw new ConfigError(sorted(issues));
}

type At = (path: DataPath, field: string, rule: string, key?: boolean) => ConfigIssue;

/** One zod issue as file issues; an unknown-keys issue becomes one per key, each at its key. */
function schemaIssues(issue: z.core.$ZodIssue, at: At): ConfigIssue[] {
  if (issue.code === 'unrecognized_keys') {
    // A schema may name what it accepts (the alert rules do); the generic map does not, but says
    // per key which accepted key is closest ("did you mean"), in the key's own part of the message.
    const generic = issue.message.startsWith('unknown field');
    const parts = generic ? issue.message.split('; ') : [];
    return issue.keys.map((k) => {
      const own = parts.find((m) => m === `unknown field '${k}'` || m.startsWith(`unknown field '${k}' (did you mean`));
      const rule = generic ? (own ?? `unknown field '${k}'`) : issue.message.replace(/^unknown (\w+)/, `unknown $1 '${k}'`);
      return at([...issue.path, k], fieldPath([...issue.path, k]), rule, true);
    });
  }
  return [at(issue.path, fieldPath(issue.path), issue.message)];
}

function yamlIssue(e: YAMLError, doc: Document, lines: LineCounter, text: string, file: string): ConfigIssue {
  const { line, col } = lines.linePos(e.pos[0]);
  const base = { file, line, column: col, field: '' };
  switch (e.code) {
    case 'DUPLICATE_KEY': {
      const found = duplicateKey(doc, e.pos[0]);
      const key = found?.key ?? text.slice(e.pos[0], e.pos[1]);
      return { ...base, field: found?.field ?? '', rule: `duplicate key '${key}'; each key may appear once in a mapping` };
    }
    case 'MULTIPLE_DOCS':
      return { ...base, rule: 'more than one YAML document (a second ---); a pipeline file holds one' };
    default: {
      // `[${NAME}]` reads as a flow mapping inside a flow list; a common slip worth naming.
      const lineText = text.split('\n')[line - 1] ?? '';
      const hint = /[[{].*\$\{/.test(lineText) ? ' (inside [ ] or { }, quote references: "${NAME}")' : '';
      return { ...base, rule: `YAML syntax: ${e.message}${hint}` };
    }
  }
}

/** The key at this offset and the field it would set. */
function duplicateKey(doc: Document, offset: number): { key: string; field: string } | undefined {
  type Found = { key: string; field: string } | undefined;
  const find = (node: unknown, path: DataPath): Found => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const p = [...path, keyText(pair.key)];
        const keyRange = (pair.key as { range?: [number, number, number] } | null)?.range;
        if (keyRange?.[0] === offset) return { key: keyText(pair.key), field: fieldPath(p) };
        const inner = find(pair.value, p);
        if (inner) return inner;
      }
    } else if (isSeq(node)) {
      for (let i = 0; i < node.items.length; i++) {
        const inner = find(node.items[i], [...path, i]);
        if (inner) return inner;
      }
    }
    return undefined;
  };
  return find(doc.contents, []);
}

function sorted(issues: ConfigIssue[]): ConfigIssue[] {
  return [...issues].sort((a, b) => a.line - b.line || a.column - b.column);
}
