import { z } from 'zod';
import { callbackFields, charCount, postbackRule, tagField, type IssueSink } from './schemas/common.js';
import { decodeServiceKeyword } from './service-keyword.js';

/**
 * What one further page of 10 SERP results costs, as a fraction of the base price (which
 * covers the first 10). The spec says only that a depth above 10 "can add charges per
 * additional block of 10"; result-shapes.md that each further page "costs a fraction of the
 * base". We take the public family's 75%: `pipeline plan` prices deep SERPs with it before the
 * ledger knows their real charge, and the emulator's price list is built from it.
 */
export const SERP_EXTRA_PAGE_FRACTION = 0.75;

/** Further started blocks of 10 results past the first 10 that a `depth` asks for. */
export function extraDepthBlocks(depth: number | undefined): number {
  return Math.max(0, Math.ceil(((depth ?? 10) - 10) / 10));
}

/**
 * What a task weighs in its endpoint's price, in tasks of the first 10 results: a SERP task 1
 * plus SERP_EXTRA_PAGE_FRACTION for each further block of 10 its depth asks for, any other 1.
 * A price per unit learnt from one depth prices another (a depth-10 task's charge prices a
 * depth-200 one at 15.25 times it). TASK_UNITS_SQL is the same over a `tasks` row.
 */
export function taskUnits(api: string, spec: Readonly<Record<string, unknown>>): number {
  return api === 'serp' ? 1 + SERP_EXTRA_PAGE_FRACTION * extraDepthBlocks(typeof spec.depth === 'number' ? spec.depth : undefined) : 1;
}

/** taskUnits of a `tasks` row (its `endpoint_id` and `spec`), in SQL. */
export const TASK_UNITS_SQL = `CASE WHEN split_part(endpoint_id, '.', 1) = 'serp'
  THEN 1 + ${SERP_EXTRA_PAGE_FRACTION} * greatest(0, ceil((coalesce(TRY_CAST(json_extract(spec, '$.depth') AS DOUBLE), 10) - 10) / 10))
  ELSE 1 END`;

/** Further blocks of 10 results (extraDepthBlocks) of a `tasks` row, in SQL: 0 for any task but a SERP. */
export const TASK_BLOCKS_SQL = `CASE WHEN split_part(endpoint_id, '.', 1) = 'serp'
  THEN greatest(0, ceil((coalesce(TRY_CAST(json_extract(spec, '$.depth') AS DOUBLE), 10) - 10) / 10))
  ELSE 0 END`;

/** `latitude,longitude,radius` with up to 7 decimals; the radius range is checked apart. */
export const locationCoordinate = z
  .string()
  .regex(/^-?\d{1,3}(\.\d{1,7})?,-?\d{1,3}(\.\d{1,7})?,\d+(\.\d+)?$/, 'latitude,longitude,radius with up to 7 decimals');

/** Fields of one SERP task (the events task table, the one the spec spells out for SERP). */
export const serpTaskShape = {
  // The 700 characters count what the service searches (after `%##` and `+` are decoded), so a
  // keyword sent with `%25`/`%2B` escapes is not refused for the escapes' length; characters
  // are code points (an emoji counts one).
  keyword: z
    .string()
    .min(1, 'must not be empty')
    .refine((k) => charCount(decodeServiceKeyword(k)) <= 700, { error: 'at most 700 characters' }),
  location_code: z.number().int().positive().optional(),
  location_name: z.string().min(1).optional(),
  location_coordinate: locationCoordinate.optional(),
  language_code: z.string().min(2).optional(),
  language_name: z.string().min(1).optional(),
  device: z.enum(['desktop', 'mobile']).optional(),
  os: z.enum(['windows', 'macos', 'android', 'ios']).optional(),
  depth: z.number().int().min(1).max(700, 'at most 700').optional(),
  priority: z.union([z.literal(1), z.literal(2)]).optional(),
  se_domain: z.string().optional(),
  // v3 notes: "ranking for a site via SERP `target`" (a domain or a page; the service matches it).
  target: z.string().min(1, 'must not be empty').optional(),
  tag: tagField,
  ...callbackFields,
  postback_data: z.enum(['regular', 'advanced', 'html']).optional(),
};

/** Cross-field rules of a SERP task: a location, postback data, device/OS pairs, radius. */
export function serpTaskRules(t: Record<string, unknown>, ctx: IssueSink): void {
  if (t.location_code === undefined && t.location_name === undefined && t.location_coordinate === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['location_code'],
      message: 'one of location_code, location_name or location_coordinate is required',
    });
  }
  postbackRule(t, ctx);
  if (t.os !== undefined && t.device !== undefined) {
    const ok = t.device === 'desktop' ? ['windows', 'macos'] : ['android', 'ios'];
    if (!ok.includes(t.os as string)) {
      ctx.addIssue({ code: 'custom', path: ['os'], message: `${String(t.device)} takes os ${ok.join(' or ')}` });
    }
  }
  if (typeof t.location_coordinate === 'string') {
    const radius = Number(t.location_coordinate.split(',')[2]);
    if (!(radius >= 199.9 && radius <= 199999)) {
      ctx.addIssue({ code: 'custom', path: ['location_coordinate'], message: 'radius between 199.9 and 199999' });
    }
  }
}

/** The SERP task fields the spec names (the events table, device, and `target` of the v3 notes). */
export const SERP_LISTED_FIELDS: ReadonlySet<string> = new Set(Object.keys(serpTaskShape));

/** Fields of a SERP task the spec does not list: sent as written, with a warning (they may be typos). */
export function unlistedSerpFields(task: Record<string, unknown>): string[] {
  return Object.keys(task).filter((k) => !SERP_LISTED_FIELDS.has(k));
}

/**
 * One SERP organic task as posted to `task_post` or a live endpoint. The spec does not list
 * the organic request fields (it spells out the events table and names `target` as new in
 * v3), so the listed fields are checked by their rules and any other field passes through:
 * refusing it would refuse real parameters of the service; the client warns about each
 * (`unlistedSerpFields`). Rules are the spec's (keyword up to 700 characters, one of three
 * location fields, depth up to 700, tag up to 255, device/OS pairs of the v3 notes).
 */
export const serpTaskSchema = z.object(serpTaskShape).passthrough().superRefine(serpTaskRules);

/**
 * A task of the other SERP types (maps, news, jobs, autocomplete, ...): the same rules, but
 * fields the spec does not list pass through, since those types take parameters of their own.
 */
export const serpTaskLooseSchema = z.object(serpTaskShape).passthrough().superRefine(serpTaskRules);

export type SerpTask = z.infer<typeof serpTaskSchema>;
