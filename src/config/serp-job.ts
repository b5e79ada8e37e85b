import { z } from 'zod';
import { SERP_ORGANIC_ENGINES, SERP_PAIRS } from '../catalog/index.js';
import { labelsSchema, modeSchema, paramsSchema } from './job-fields.js';

/** Which OS values fit which device; the service rejects any other pair. */
export const OS_BY_DEVICE = {
  desktop: ['windows', 'macos'],
  mobile: ['android', 'ios'],
} as const;

const LANGUAGE_CODE = /^[a-z]{2,3}(-[a-z]{2,4})?$/i;
const LANGUAGE_NAME = /^\p{L}[\p{L} ().'-]*$/u;
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** The SERP types of the spec's engine/type pairs. */
export const SERP_TYPES = [...new Set(SERP_PAIRS.map(([, t]) => t))] as [string, ...string[]];

export const engineSchema = z.enum(SERP_ORGANIC_ENGINES, {
  error: (iss) => `unknown engine '${String(iss.input)}'; accepted: ${SERP_ORGANIC_ENGINES.join(', ')}`,
});

export const locationSchema = z.union(
  [
    z.number().int('a location_code is a whole number').positive('a location_code is a positive integer'),
    z.string().trim().min(1, 'a location_name must not be empty'),
  ],
  { error: 'a positive integer location_code or a non-empty location_name' },
);

export const languageSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .refine((s) => LANGUAGE_CODE.test(s) || LANGUAGE_NAME.test(s), {
    error: "a language code like 'en' or 'pt-br', or a language name like 'English'",
  });

const keywordSchema = z
  .string()
  .max(700, 'at most 700 characters')
  .refine((s) => s.trim().length > 0, { error: 'must not be empty' });

const domainSchema = z.string().regex(HOSTNAME, {
  error: (iss) =>
    typeof iss.input === 'string' && HOSTNAME.test(iss.input.toLowerCase())
      ? `write it in lower case: '${iss.input.toLowerCase()}'`
      : "a lower-case hostname like 'example.com' (no scheme, port or path)",
});

/**
 * One SERP rank-tracking job: the cross product of engines × locations × languages ×
 * devices × keywords becomes tasks. Every field but `locations` and `keywords` has a
 * default, so a minimal job is three lines.
 */
/** A file of keywords next to the pipeline file: `.txt` one a line, `.csv` a `keyword` column (else the first). */
export const keywordsFileSchema = z
  .string()
  .regex(/\.(txt|csv)$/i, 'a .txt (one keyword a line) or .csv file')
  .optional()
  .describe('Keywords from a file, relative to the pipeline file: .txt one a line, .csv the `keyword` column (else the first column); added to `keywords`. A regular file of at most 10 MB, inside the pipeline file\'s folder unless `keywords_file_outside` is true.');

/** Lets `keywords_file` name a file outside the pipeline file's folder (or a symlink leading out of it). */
export const keywordsFileOutsideSchema = z
  .boolean()
  .optional()
  .describe('true to let `keywords_file` name a file outside the pipeline file\'s folder (by path or through a symlink). Off by default, so a pipeline file cannot make a run read, and buy tasks for, any file the user can read.');

/** A job's optional name; shared by every job kind. */
export const jobNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'lower-case letters, digits, - and _, starting with a letter or digit')
  .max(64, 'at most 64 characters')
  .optional()
  .describe('Names the job in logs, the ledger and the warehouse. Default: `<kind>-<index>` (0-based).');

export const serpJobSchema = z
  .strictObject({
    kind: z.literal('serp').describe('Job kind. `serp`: rank tracking of keywords on search result pages.'),
    name: jobNameSchema,
    labels: labelsSchema,
    engines: z
      .array(engineSchema)
      .min(1, 'at least one engine')
      .default(['engA'])
      .describe(`Search engines to query. One of ${SERP_ORGANIC_ENGINES.join(', ')}.`),
    type: z
      .enum(SERP_TYPES, { error: (iss) => `unknown SERP type '${String(iss.input)}'; accepted: ${SERP_TYPES.join(', ')}` })
      .default('organic')
      .describe(`SERP type; each engine has its own (${SERP_PAIRS.map(([e, t]) => `${e}/${t}`).join(', ')}).`),
    mode: modeSchema,
    collect: z
      .literal('pull', { error: "a job's collect takes only pull; set push for the whole file with collection.mode at the top level" })
      .default('pull')
      .describe('Kept for older files: only `pull`. How results come back is set for the whole file by `collection.mode`.'),
    priority: z
      .literal([1, 2], { error: '1 (normal) or 2 (high)' })
      .default(1)
      .describe('1: normal (default). 2: high priority, which costs extra.'),
    depth: z
      .number()
      .int('a whole number')
      .min(1, 'at least 1')
      .max(700, 'at most 700')
      .default(10)
      .describe('Results per SERP, 1 to 700; default 10, as the service. Above 10, each further block of 10 adds charges (unused blocks are refunded).'),
    devices: z
      .array(z.enum(['desktop', 'mobile']))
      .min(1, 'at least one device')
      .default(['desktop'])
      .describe('Devices to emulate; each multiplies the task count.'),
    os: z
      .enum(['windows', 'macos', 'android', 'ios'])
      .optional()
      .describe('Operating system to emulate; must fit every device (desktop: windows|macos; mobile: android|ios).'),
    locations: z
      .array(locationSchema)
      .min(1, 'at least one location')
      .describe('Where to search: a location_code (e.g. 2840 for the United States) or a location_name.'),
    languages: z
      .array(languageSchema)
      .min(1, 'at least one language')
      .default(['en'])
      .describe("Search languages: a language code ('en', 'pt-br') or a language name ('English')."),
    keywords: z
      .array(keywordSchema)
      .default([])
      .describe('Keywords to track, up to 700 characters each. The planner lower-cases and de-duplicates them.'),
    keywords_file: keywordsFileSchema,
    keywords_file_outside: keywordsFileOutsideSchema,
    track_domains: z
      .array(domainSchema)
      .optional()
      .describe('Lower-case hostnames whose ranks you follow; the marts report their positions.'),
    target: z
      .string()
      .min(1, 'must not be empty')
      .optional()
      .describe('SERP `target` (new in v3): a domain or page whose ranking the service reports; sent with every task.'),
    params: paramsSchema.describe('Other SERP request fields, sent with every task as written; fields the spec does not list are sent with a warning.'),
  })
  .superRefine(checkOsFitsDevices, { when: () => true })
  .superRefine(checkEngineType, { when: () => true })
  .superRefine(requireKeywords)
  .describe('SERP rank tracking: any engine/type pair of the service.');

/** Each engine serves only some types (engA has most; engB to engF organic only); events are desktop only. */
function checkEngineType(job: { engines?: unknown; type?: unknown; devices?: unknown }, ctx: z.RefinementCtx): void {
  if (typeof job !== 'object' || job === null) return;
  const type = typeof job.type === 'string' ? job.type : 'organic';
  const engines = Array.isArray(job.engines) ? job.engines : ['engA'];
  for (const [i, engine] of engines.entries()) {
    if (typeof engine !== 'string' || !SERP_ORGANIC_ENGINES.includes(engine as never)) continue;
    if (!SERP_PAIRS.some(([e, t]) => e === engine && t === type)) {
      const types = SERP_PAIRS.filter(([e]) => e === engine).map(([, t]) => t);
      ctx.addIssue({ code: 'custom', path: ['engines', i], message: `engine '${engine}' has no '${type}' SERP; its types: ${types.join(', ')}` });
    }
  }
  if (type === 'events' && Array.isArray(job.devices) && job.devices.includes('mobile')) {
    ctx.addIssue({ code: 'custom', path: ['devices'], message: 'events results are desktop only' });
  }
}

/** Keywords inline, from a file, or both; a job with neither has nothing to do. */
export function requireKeywords(job: { keywords?: unknown; keywords_file?: unknown }, ctx: z.RefinementCtx): void {
  const inline = Array.isArray(job.keywords) ? job.keywords.length : 0;
  if (inline === 0 && typeof job.keywords_file !== 'string') {
    ctx.addIssue({ code: 'custom', path: ['keywords'], message: 'at least one keyword, or a keywords_file' });
  }
}

/** Runs even when other fields failed, so a wrong os is reported with them; reads defensively. */
function checkOsFitsDevices(job: { os?: unknown; devices?: unknown }, ctx: z.RefinementCtx): void {
  if (typeof job !== 'object' || job === null) return;
  const os = job.os;
  if (typeof os !== 'string') return;
  const devices = Array.isArray(job.devices) ? job.devices : ['desktop'];
  for (const device of devices) {
    const fits = OS_BY_DEVICE[device as keyof typeof OS_BY_DEVICE] as readonly string[] | undefined;
    if (fits && !fits.includes(os)) {
      ctx.addIssue({ code: 'custom', path: ['os'], message: `os '${os}' does not fit device '${device}' (${device}: ${fits.join(' or ')})` });
      return;
    }
  }
}

/** What a user may write for a SERP job. */
export type SerpJobInput = z.input<typeof serpJobSchema>;
/** A SERP job with every default filled except `name` (filled by the pipeline schema). */
export type SerpJobParsed = z.output<typeof serpJobSchema>;
