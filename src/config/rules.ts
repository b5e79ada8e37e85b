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
      return iss.keys.map((k) => `unknown field '${k}'`).join('; ');
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
