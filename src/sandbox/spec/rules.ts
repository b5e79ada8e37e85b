/**
 * Request rules as data: one {@link RequestRules} per request table of the spec, read by one
 * checker ({@link checkRequest}). The tables themselves are in limits.ts, each field with the
 * spec section it comes from. Nothing here knows an endpoint; it only reads the table.
 */
import { READINGS } from '../readings.js';
import { imageTier } from './prices.js';

/** A rule on one field. Lengths count Unicode code points: the spec says "characters". */
export type FieldRule =
  | {
      type: 'text';
      required?: boolean;
      nonEmpty?: boolean;
      /** At least this many characters (code points). */
      minChars?: number;
      /** At most this many characters (code points). */
      maxChars?: number;
      /** Count the characters after the service's keyword decoding (`%##` decoded, `+` a space). */
      countDecoded?: boolean;
      format?: 'url' | 'uuid' | 'spec-datetime' | 'date' | 'coordinate' | 'order-rule' | 'image-size';
      oneOf?: readonly string[];
    }
  | { type: 'integer'; required?: boolean; min?: number; max?: number; oneOf?: readonly number[] }
  | { type: 'number'; min?: number; max?: number }
  | { type: 'boolean'; only?: boolean }
  | {
      type: 'texts';
      required?: boolean;
      minItems?: number;
      maxItems?: number;
      nonEmpty?: boolean;
      maxChars?: number;
      format?: 'order-rule';
    }
  /** A string or a non-empty array of strings (`/v1/embeddings` `input`). */
  | { type: 'text-or-texts'; required?: boolean }
  /** Chat messages: "array of objects with `role` and `content`" (Chat completion (text)); content a string or parts. */
  | { type: 'messages'; required?: boolean }
  /** On-page filters: `[field, operator, value]` conditions joined by `and` / `or`. */
  | { type: 'filters'; maxConditions: number };

/** A rule between fields. */
export type CrossRule =
  /** "required unless ... is given": at least one of the fields. */
  | { rule: 'one-of'; fields: readonly string[] }
  /** "cannot be combined ... in one request". */
  | { rule: 'not-both'; fields: readonly [string, string] }
  /** "required with": `field` must be present when `with` is. */
  | { rule: 'required-with'; field: string; with: string }
  /** A datetime (or date) field later than (or not before) another. */
  | { rule: 'after'; field: string; than: string; orEqual?: boolean }
  /** Device and OS pairs (desktop: windows or macos; mobile: android or ios). */
  | { rule: 'device-os' }
  /** The radius (third part) of a `latitude,longitude,radius` coordinate. */
  | { rule: 'radius'; field: string; min: number; max: number }
  /** `field` is taken only when `when` holds one of `values`. */
  | { rule: 'only-when'; field: string; when: string; values: readonly string[] }
  /** `field` (an integer) at most `limits[value of when]`. */
  | { rule: 'at-most-by'; field: string; when: string; limits: Readonly<Record<string, number>> };

export interface RequestRules {
  fields: Readonly<Record<string, FieldRule>>;
  /** `refuse`: a field not in the table fails the task (40506); `pass`: it is echoed. */
  unknown: 'refuse' | 'pass';
  cross?: readonly CrossRule[];
}

/** One broken rule: the field (dot path) and what it must be. */
export interface RuleIssue {
  field: string;
  message: string;
}

/** The issues of a task (or `/v1` body) against its rules; unknown fields are reported apart. */
export interface RuleCheck {
  issues: RuleIssue[];
  unknownFields: string[];
}

export const ON_PAGE_OPERATORS = ['regex', 'not_regex', '<', '<=', '>', '>=', '=', '<>', 'in', 'not_in', 'like', 'not_like'];

/** Characters as the spec counts them: Unicode code points, not UTF-16 units. */
export function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * What the service searches for a posted keyword (events table: "`%##` is decoded, `+`
 * becomes a space"): `+` a space, each run of `%##` decoded as UTF-8. A run that is not
 * UTF-8 is read as READINGS.keywordBadEscapes says (the spec is silent).
 */
export function decodeKeyword(sent: string): string {
  return sent.replace(/\+/g, ' ').replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      if (READINGS.keywordBadEscapes.value === 'kept') return run;
      return run.replace(/%([0-9a-fA-F]{2})/g, (esc, hex: string) =>
        parseInt(hex, 16) < 0x80 ? String.fromCharCode(parseInt(hex, 16)) : esc,
      );
    }
  });
}

const SPEC_DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2})[-:](\d{2})[-:](\d{2}) \+00:00$/;

/** A UTC datetime as the spec writes it (`yyyy-mm-dd hh-mm-ss +00:00`) in epoch ms; undefined otherwise. */
export function parseSpecDateTime(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = SPEC_DATETIME.exec(v);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const ms = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
  const back = new Date(ms);
  return back.getUTCDate() === d && back.getUTCHours() === h ? ms : undefined;
}

function isDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s);
}

function isUrl(s: string): boolean {
  try {
    return new URL(s).protocol.length > 0;
  } catch {
    return false;
  }
}

const FORMATS: Record<string, { test: (s: string) => boolean; says: string }> = {
  url: { test: isUrl, says: 'an absolute URL' },
  uuid: { test: (s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s), says: 'a UUID' },
  'spec-datetime': { test: (s) => parseSpecDateTime(s) !== undefined, says: 'UTC datetime as yyyy-mm-dd hh-mm-ss +00:00' },
  date: { test: isDate, says: 'a date as yyyy-mm-dd' },
  coordinate: {
    test: (s) => /^-?\d{1,3}(\.\d{1,7})?,-?\d{1,3}(\.\d{1,7})?,\d+(\.\d+)?$/.test(s),
    says: 'latitude,longitude,radius with up to 7 decimals',
  },
  'image-size': { test: (s) => imageTier(s) !== undefined, says: '<width>x<height> with the longest edge at most 4K' },
  'order-rule': { test: (s) => /^[A-Za-z0-9_.]+,(asc|desc)$/.test(s), says: 'format <field>,<asc or desc>' },
};

function checkField(name: string, rule: FieldRule, v: unknown, out: RuleIssue[]): void {
  const bad = (message: string, field = name): void => {
    out.push({ field, message });
  };
  switch (rule.type) {
    case 'text': {
      if (typeof v !== 'string') return bad('must be a string');
      if (rule.nonEmpty && v.length === 0) return bad('must not be empty');
      const counted = rule.countDecoded ? decodeKeyword(v) : v;
      if (rule.minChars !== undefined && charCount(v) < rule.minChars) return bad(`at least ${rule.minChars} characters`);
      if (rule.maxChars !== undefined && charCount(counted) > rule.maxChars) return bad(`at most ${rule.maxChars} characters`);
      if (rule.format && !FORMATS[rule.format]!.test(v)) return bad(`must be ${FORMATS[rule.format]!.says}`);
      if (rule.oneOf && !rule.oneOf.includes(v)) return bad(`must be one of ${rule.oneOf.join(', ')}`);
      return;
    }
    case 'integer':
    case 'number': {
      if (typeof v !== 'number' || !Number.isFinite(v)) return bad(`must be ${rule.type === 'integer' ? 'an integer' : 'a number'}`);
      if (rule.type === 'integer' && !Number.isInteger(v)) return bad('must be an integer');
      if (rule.type === 'integer' && rule.oneOf && !rule.oneOf.includes(v)) return bad(`must be one of ${rule.oneOf.join(', ')}`);
      if (rule.min !== undefined && v < rule.min) return bad(`at least ${rule.min}`);
      if (rule.max !== undefined && v > rule.max) return bad(`at most ${rule.max}`);
      return;
    }
    case 'boolean':
      if (typeof v !== 'boolean') return bad('must be true or false');
      if (rule.only !== undefined && v !== rule.only) bad(`must be ${String(rule.only)}`);
      return;
    case 'texts': {
      if (!Array.isArray(v)) return bad('must be an array of strings');
      if (rule.minItems !== undefined && v.length < rule.minItems) return bad(`at least ${rule.minItems}`);
      if (rule.maxItems !== undefined && v.length > rule.maxItems) return bad(`at most ${rule.maxItems}`);
      v.forEach((item, i) => {
        const field = `${name}.${i}`;
        if (typeof item !== 'string') return bad('must be a string', field);
        if (rule.nonEmpty && item.length === 0) return bad('must not be empty', field);
        if (rule.maxChars !== undefined && charCount(item) > rule.maxChars) return bad(`at most ${rule.maxChars} characters`, field);
        if (rule.format && !FORMATS[rule.format]!.test(item)) return bad(`must be ${FORMATS[rule.format]!.says}`, field);
      });
      return;
    }
    case 'text-or-texts': {
      if (typeof v === 'string') return v.length === 0 ? bad('must not be empty') : undefined;
      if (!Array.isArray(v) || v.length === 0) return bad('must be a string or a non-empty array of strings');
      v.forEach((item, i) => {
        if (typeof item !== 'string' || item.length === 0) bad('must be a non-empty string', `${name}.${i}`);
      });
      return;
    }
    case 'messages': {
      if (!Array.isArray(v) || v.length === 0) return bad('must be a non-empty array of messages');
      v.forEach((m, i) => {
        const msg = m as { role?: unknown; content?: unknown } | null;
        if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return bad('must be an object with role and content', `${name}.${i}`);
        if (!(READINGS.chatRoles.value as readonly unknown[]).includes(msg.role))
          bad(`must be ${READINGS.chatRoles.value.join(', ')}`, `${name}.${i}.role`);
        if (typeof msg.content !== 'string' && !Array.isArray(msg.content))
          bad('must be a string or an array of content parts', `${name}.${i}.content`);
      });
      return;
    }
    case 'filters': {
      const n = countConditions(v, name, out);
      if (n > rule.maxConditions) bad(`at most ${rule.maxConditions} conditions`);
      return;
    }
  }
}

/** Checks a filter expression (conditions joined by `and`/`or`, nesting allowed); returns the conditions counted. */
function countConditions(v: unknown, path: string, out: RuleIssue[]): number {
  if (!Array.isArray(v)) {
    out.push({ field: path, message: 'must be a filter array' });
    return 0;
  }
  if (v.length === 3 && typeof v[0] === 'string' && typeof v[1] === 'string' && v[1] !== 'and' && v[1] !== 'or') {
    if (!ON_PAGE_OPERATORS.includes(v[1]))
      out.push({ field: `${path}.1`, message: `operator must be one of ${ON_PAGE_OPERATORS.join(' ')}` });
    return 1;
  }
  if (v.length === 0) {
    out.push({ field: path, message: 'at least one condition' });
    return 0;
  }
  let n = 0;
  v.forEach((item, i) => {
    if (i % 2 === 1) {
      if (item !== 'and' && item !== 'or') out.push({ field: `${path}.${i}`, message: 'conditions are joined by "and" or "or"' });
    } else n += countConditions(item, `${path}.${i}`, out);
  });
  if (v.length % 2 === 0) out.push({ field: path, message: 'a join ("and"/"or") must sit between two conditions' });
  return n;
}

function checkCross(rule: CrossRule, t: Record<string, unknown>, out: RuleIssue[]): void {
  const has = (f: string) => t[f] !== undefined;
  switch (rule.rule) {
    case 'one-of':
      if (!rule.fields.some(has)) out.push({ field: rule.fields[0]!, message: `one of ${rule.fields.join(', ')} is required` });
      return;
    case 'not-both':
      if (has(rule.fields[0]) && has(rule.fields[1]))
        out.push({ field: rule.fields[1], message: `cannot be combined with ${rule.fields[0]} in one request` });
      return;
    case 'required-with':
      if (has(rule.with) && !has(rule.field)) out.push({ field: rule.field, message: `required with ${rule.with}` });
      return;
    case 'after': {
      const a = t[rule.than];
      const b = t[rule.field];
      if (typeof a !== 'string' || typeof b !== 'string') return;
      const ms = (s: string) => parseSpecDateTime(s) ?? (isDate(s) ? Date.parse(`${s}T00:00:00Z`) : undefined);
      const am = ms(a);
      const bm = ms(b);
      if (am === undefined || bm === undefined) return;
      if (rule.orEqual ? bm < am : bm <= am)
        out.push({ field: rule.field, message: rule.orEqual ? `must not be before ${rule.than}` : `must be later than ${rule.than}` });
      return;
    }
    case 'device-os': {
      if (!has('device') || !has('os')) return;
      const ok = t.device === 'desktop' ? ['windows', 'macos'] : ['android', 'ios'];
      if (!ok.includes(t.os as string)) out.push({ field: 'os', message: `${String(t.device)} takes os ${ok.join(' or ')}` });
      return;
    }
    case 'radius': {
      const v = t[rule.field];
      if (typeof v !== 'string') return;
      const r = Number(v.split(',')[2]);
      if (!(r >= rule.min && r <= rule.max)) out.push({ field: rule.field, message: `radius between ${rule.min} and ${rule.max}` });
      return;
    }
    case 'only-when':
      if (has(rule.field) && !rule.values.includes(t[rule.when] as string))
        out.push({ field: rule.field, message: `taken only when ${rule.when} is ${rule.values.join(' or ')}` });
      return;
    case 'at-most-by': {
      const limit = rule.limits[t[rule.when] as string];
      const v = t[rule.field];
      if (limit !== undefined && typeof v === 'number' && v > limit)
        out.push({ field: rule.field, message: `at most ${limit} for ${String(t[rule.when])}` });
      return;
    }
  }
}

/** Checks one task (or body) against its rules: every broken field rule, cross rules once the fields are sound. */
export function checkRequest(rules: RequestRules, raw: unknown): RuleCheck {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return { issues: [{ field: '(task)', message: 'must be a JSON object' }], unknownFields: [] };
  const t = raw as Record<string, unknown>;
  const issues: RuleIssue[] = [];
  for (const [name, rule] of Object.entries(rules.fields)) {
    const v = t[name];
    if (v === undefined) {
      if ('required' in rule && rule.required) issues.push({ field: name, message: 'is required' });
      continue;
    }
    checkField(name, rule, v, issues);
  }
  if (issues.length === 0) for (const c of rules.cross ?? []) checkCross(c, t, issues);
  const unknownFields = rules.unknown === 'refuse' ? Object.keys(t).filter((k) => !(k in rules.fields)) : [];
  return { issues, unknownFields };
}
