import type { z } from 'zod';

type RawIssue = Parameters<z.core.$ZodErrorMap>[0];

/**
 * Turns zod's generic issues into the short rule sentences users see next to a file and
 * line ("required", "at most 700", "one of desktop, mobile"). Messages set on a schema
 * field win over this map, so it only covers what the schema leaves generic.
 */
export const ruleErrorMap: z.core.$ZodErrorMap = (iss) => {
  switch (iss.code) {
    case 'invalid_type':
      return typeRule(iss.expected, iss.input);
    case 'too_big':
      return sizeRule('at most', iss.maximum, iss.origin, iss.inclusive !== false);
    case 'too_small':
      if (iss.origin === 'string' && Number(iss.minimum) === 1) return 'must not be empty';
      return sizeRule('at least', iss.minimum, iss.origin, iss.inclusive !== false);
    case 'invalid_value':
      return iss.values.length === 1 ? `must be ${show(iss.values[0])}` : `one of ${iss.values.map(String).join(', ')}`;
    case 'invalid_union':
      return unionRule(iss);
    case 'unrecognized_keys':
      return iss.keys.map((k) => unknownField(k, knownKeys(iss.inst))).join('; ');
    default:
      return undefined;
  }
};

function typeRule(expected: string, input: unknown): string {
  if (input === undefined) return 'required';
  if (input === null) return `has no value; expected ${NOUNS[expected] ?? expected}`;
  const got = describeValue(input);
  switch (expected) {
    case 'string':
      return typeof input === 'number' || typeof input === 'boolean'
        ? `must be text, got ${got} (quote it: "${String(input)}")`
        : `must be text, got ${got}`;
    case 'number':
      return `must be a number, got ${got}`;
    case 'int':
      return `must be a whole number, got ${got}`;
    case 'array':
      return `must be a list, got ${got}`;
    case 'object':
      return `must be a mapping, got ${got}`;
    default:
      return `must be ${expected}, got ${got}`;
  }
}

const NOUNS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  array: 'a list',
  object: 'a mapping',
};

function sizeRule(bound: 'at most' | 'at least', n: number | bigint, origin: string, inclusive: boolean): string {
  const unit = origin === 'string' ? ' characters' : origin === 'array' ? (Number(n) === 1 ? ' item' : ' items') : '';
  if (!inclusive) return `${bound === 'at most' ? 'less than' : 'greater than'} ${n}${unit}`;
  return `${bound} ${n}${unit}`;
}

function unionRule(iss: Extract<RawIssue, { code: 'invalid_union' }>): string | undefined {
  if (iss.discriminator === undefined) return undefined;
  const accepted = ((iss.options as unknown[] | undefined) ?? []).map(String).join(', ');
  const input = iss.input as Record<string, unknown> | undefined;
  const value = input && typeof input === 'object' ? input[iss.discriminator] : undefined;
  if (value === undefined) return `required; one of ${accepted}`;
  return `unknown ${iss.discriminator} ${show(value)}; accepted: ${accepted}`;
}

function show(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : String(v);
}

function describeValue(v: unknown): string {
  if (v === null) return 'nothing (null)';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `text '${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`;
  return `${typeof v} ${String(v)}`;
}

/** The keys an object schema accepts (zod's `shape`), for "did you mean". */
function knownKeys(inst: unknown): string[] {
  const shape = (inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape;
  return shape ? Object.keys(shape) : [];
}

/** `unknown field 'depht' (did you mean 'depth'?)`: the closest accepted key, when one is close. */
export function unknownField(key: string, known: readonly string[]): string {
  const guess = didYouMean(key, known);
  return guess ? `unknown field '${key}' (did you mean '${guess}'?)` : `unknown field '${key}'`;
}

/**
 * The accepted name closest to a mistyped one by edit distance (a swap of two neighbours counts
 * one), when it is close: at most a third of the name's length, and 1 for names of 4 letters
 * or fewer. Case is ignored. Null when none is that close, or two are equally close.
 */
export function didYouMean(word: string, candidates: readonly string[]): string | null {
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.floor(w.length / 3));
  let best: string | null = null;
  let bestD = Infinity;
  let tie = false;
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestD) [best, bestD, tie] = [c, d, false];
    else if (d === bestD && c !== best) tie = true;
  }
  return best !== null && bestD > 0 && bestD <= limit && !tie ? best : null;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}
