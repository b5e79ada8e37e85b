import { isMap, isScalar, isSeq, Scalar, type Document } from 'yaml';
import { keyText, type DataPath } from './positions.js';

/** Environment variables as `process.env` holds them. */
export type Env = Record<string, string | undefined>;

/** A `${NAME}` that could not be filled, and where it was. */
export interface EnvIssue {
  path: DataPath;
  rule: string;
}

/** `${NAME}` expands; `$${NAME}` stays literally `${NAME}`. */
const REFERENCE = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Expands `${NAME}` in every string value of the document, in place, so values that
 * differ per machine (or must not be committed) come from the environment. Keys are
 * left alone. Runs on the YAML nodes rather than the data so a missing variable is
 * reported at its own line. An unquoted value is typed after expansion as YAML would
 * type the text (`depth: ${DEPTH}` with DEPTH=50 is the number 50); quote it to keep text.
 */
export function expandEnv(doc: Document, env: Env): EnvIssue[] {
  const issues: EnvIssue[] = [];
  const visit = (node: unknown, path: DataPath): void => {
    if (isMap(node)) {
      for (const pair of node.items) visit(pair.value, [...path, keyText(pair.key)]);
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => visit(item, [...path, i]));
    } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('${')) {
      const missing: string[] = [];
      const expanded = node.value.replace(REFERENCE, (ref: string, escaped: string | undefined, name: string) => {
        if (escaped) return ref.slice(1);
        const value = env[name];
        if (value === undefined) {
          missing.push(name);
          return ref;
        }
        return value;
      });
      node.value = missing.length === 0 && node.type === Scalar.PLAIN ? retype(expanded) : expanded;
      for (const name of missing) {
        issues.push({ path, rule: `environment variable ${name} is not set (referenced as \${${name}})` });
      }
    }
  };
  visit(doc.contents, []);
  return issues;
}

/** The number or boolean an unquoted text stands for in YAML's core schema; other text stays text. */
function retype(text: string): string | number | boolean {
  if (NUMBER.test(text)) return Number(text);
  if (/^(true|True|TRUE)$/.test(text)) return true;
  if (/^(false|False|FALSE)$/.test(text)) return false;
  return text;
}
