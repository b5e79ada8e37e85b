import { z } from 'zod';

/**
 * Field rules that several request tables of the spec repeat, written once so every
 * schema states them the same way and gives the same message.
 */

/**
 * Characters of a text as the spec counts them: Unicode code points, so an emoji or an
 * astral CJK character (two UTF-16 code units, two to JavaScript's `.length`) is one. zod's
 * string `.max` counts the same way (test/unit/config/code-point-lengths.test.ts holds it to
 * that); a rule written by hand counts with this.
 */
export function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** `tag`: at most 255 characters, echoed in `data` (the run stage matches tasks by it). */
export const tagField = z.string().max(255, 'at most 255 characters').optional();

/** A UTC datetime as the spec writes it (`yyyy-mm-dd hh-mm-ss +00:00`; colons accepted too). */
export const SPEC_DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2})[-:](\d{2})[-:](\d{2}) \+00:00$/;

export const specDatetime = z.string().regex(SPEC_DATETIME, 'UTC datetime as yyyy-mm-dd hh-mm-ss +00:00');

/** Reads a spec datetime as epoch milliseconds; NaN when the text is not one. */
export function parseSpecDatetime(s: string): number {
  const m = SPEC_DATETIME.exec(s);
  if (!m) return Number.NaN;
  const [, y, mo, d, h, mi, se] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, se!);
}

/** Formats a date the way the spec writes datetimes (hyphens in the time, as the spec shows). */
export function formatSpecDatetime(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}-${p(d.getUTCMinutes())}-${p(d.getUTCSeconds())} +00:00`;
}

/** A calendar date `yyyy-mm-dd` that exists. */
export const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'date as yyyy-mm-dd')
  .refine(
    (s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    'not a calendar date',
  );

/** Callback fields of a standard-mode task: `$id` and `$tag` are substituted by the service. */
export const callbackFields = {
  pingback_url: z.string().url('an absolute URL').optional(),
  postback_url: z.string().url('an absolute URL').optional(),
  postback_data: z.string().min(1).optional(),
};

export interface IssueSink {
  addIssue(issue: { code: 'custom'; path: PropertyKey[]; message: string }): void;
}

/** Adds an issue when none of the alternative fields is present ("required unless ..."). */
export function requireOneOf(task: Record<string, unknown>, fields: readonly string[], ctx: IssueSink): void {
  if (fields.some((f) => task[f] !== undefined)) return;
  const list = fields.length === 2 ? `${fields[0]} or ${fields[1]}` : `one of ${fields.slice(0, -1).join(', ')} or ${fields.at(-1)}`;
  ctx.addIssue({ code: 'custom', path: [fields[0]!], message: `${list} is required` });
}

/** Adds an issue when both of two fields that cannot be combined are present. */
export function forbidBoth(task: Record<string, unknown>, a: string, b: string, ctx: IssueSink): void {
  if (task[a] !== undefined && task[b] !== undefined) {
    ctx.addIssue({ code: 'custom', path: [b], message: `cannot be combined with ${a} in one request` });
  }
}

/** `postback_data` is required with `postback_url`. */
export function postbackRule(task: Record<string, unknown>, ctx: IssueSink): void {
  if (task.postback_url !== undefined && task.postback_data === undefined) {
    ctx.addIssue({ code: 'custom', path: ['postback_data'], message: 'required with postback_url' });
  }
}

/** `datetime_to` must be later than `datetime_from` when both are given. */
export function datetimeOrderRule(task: Record<string, unknown>, ctx: IssueSink): void {
  const { datetime_from: from, datetime_to: to } = task;
  if (typeof from !== 'string' || typeof to !== 'string') return;
  const a = parseSpecDatetime(from);
  const b = parseSpecDatetime(to);
  if (!Number.isNaN(a) && !Number.isNaN(b) && b <= a) {
    ctx.addIssue({ code: 'custom', path: ['datetime_to'], message: 'must be later than datetime_from' });
  }
}

/**
 * A task schema for endpoints whose request fields the spec does not show: any object,
 * unknown fields passed through, with the rules every task shares (`tag` length).
 */
export const looseTaskSchema = z.object({ tag: tagField }).passthrough();
