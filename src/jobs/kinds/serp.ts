import { z } from 'zod';
import { encodeServiceKeyword, SERP_ORGANIC_ENGINES, SERP_PAIRS } from '../../catalog/index.js';
import { jobBase, legacyCollectSchema, modeSchema, paramsSchema, prioritySchema } from '../base-fields.js';
import { functionEndpoint, normalizeKeyword, places, type Spec } from '../expand.js';
import { defineJobKind } from '../job-kind.js';
import { keywordSchema, keywordsFileOutsideSchema, keywordsFileSchema, requireKeywords } from '../keyword-fields.js';
import { languageSchema, locationSchema } from '../place-fields.js';
import { checkSerpPlaces } from '../reference.js';
import { autoDepthSchema, checkAutoDepth, depthSchema } from './serp-depth.js';

/** Which OS values fit which device; the service rejects any other pair. */
export const OS_BY_DEVICE = {
  desktop: ['windows', 'macos'],
  mobile: ['android', 'ios'],
} as const;

/** Tracked domains one SERP job may list: each is a competitor the marts and alerts follow per series. */
export const MAX_TRACKED_DOMAINS = 10;

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** The SERP types of the spec's engine/type pairs. */
export const SERP_TYPES = [...new Set(SERP_PAIRS.map(([, t]) => t))] as [string, ...string[]];

const engineSchema = z.enum(SERP_ORGANIC_ENGINES, {
  error: (iss) => `unknown engine '${String(iss.input)}'; accepted: ${SERP_ORGANIC_ENGINES.join(', ')}`,
});

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
export const serpJobSchema = z
  .strictObject({
    ...jobBase('serp', 'rank tracking of keywords on search result pages.'),
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
    collect: legacyCollectSchema,
    priority: prioritySchema,
    depth: depthSchema,
    auto_depth: autoDepthSchema,
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
      .array(keywordSchema(700))
      .default([])
      .describe('Keywords to track, up to 700 characters each. The planner lower-cases and de-duplicates them.'),
    keywords_file: keywordsFileSchema,
    keywords_file_outside: keywordsFileOutsideSchema,
    track_domains: z
      .array(domainSchema)
      .max(MAX_TRACKED_DOMAINS, {
        error: (iss) =>
          `at most ${MAX_TRACKED_DOMAINS} tracked domains per job (your own and your competitors); got ${(iss.input as unknown[]).length}; keep the ${MAX_TRACKED_DOMAINS} that matter most`,
      })
      .optional()
      .describe(
        `Lower-case hostnames whose ranks you follow, up to ${MAX_TRACKED_DOMAINS} (yours and your competitors'); the marts report their positions and share of SERP.`,
      ),
    target: z
      .string()
      .min(1, 'must not be empty')
      .optional()
      .describe('SERP `target` (new in v3): a domain or page whose ranking the service reports; sent with every task.'),
    params: paramsSchema.describe(
      'Other SERP request fields, sent with every task as written; fields the spec does not list are sent with a warning.',
    ),
  })
  .superRefine(checkOsFitsDevices, { when: () => true })
  .superRefine(checkEngineType, { when: () => true })
  .superRefine(requireKeywords)
  .superRefine(checkAutoDepth, { when: () => true })
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
      ctx.addIssue({
        code: 'custom',
        path: ['engines', i],
        message: `engine '${engine}' has no '${type}' SERP; its types: ${types.join(', ')}`,
      });
    }
  }
  if (type === 'events' && Array.isArray(job.devices) && job.devices.includes('mobile')) {
    ctx.addIssue({ code: 'custom', path: ['devices'], message: 'events results are desktop only' });
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
      ctx.addIssue({
        code: 'custom',
        path: ['os'],
        message: `os '${os}' does not fit device '${device}' (${device}: ${fits.join(' or ')})`,
      });
      return;
    }
  }
}

/** What a user may write for a SERP job. */
export type SerpJobInput = z.input<typeof serpJobSchema>;

/**
 * SERP rank tracking: engines × devices × locations × languages × keywords, one task each
 * (repeats are dropped by tag in the planner).
 */
export const serpJob = defineJobKind({
  kind: 'serp',
  schema: serpJobSchema,
  expand(job) {
    const specs: Spec[] = [];
    for (const engine of job.engines) {
      const ep = functionEndpoint(`serp.${engine}.${job.type}`, job.mode);
      for (const device of job.devices) {
        for (const place of places(job.locations, job.languages)) {
          for (const keyword of job.keywords) {
            specs.push({
              endpoint: ep,
              spec: {
                // Sent so that the service, which decodes `%##` and `+`, searches what the user wrote.
                keyword: encodeServiceKeyword(normalizeKeyword(keyword)),
                ...place,
                ...(job.type === 'events' ? {} : { device }),
                ...(job.os ? { os: job.os } : {}),
                // `auto` stays in the spec (and its tag) until the planner chooses the series' depth.
                depth: job.depth,
                ...(ep.mode === 'task_post' ? { priority: job.priority } : {}),
                ...(job.target ? { target: job.target } : {}),
                ...job.params,
              },
            });
          }
        }
      }
    }
    return { specs, repeatsDropped: 0 };
  },
  // A place the service does not know would be answered after the job's other tasks were paid for. The lists are
  // engA's (the spec shows no other engine's), so jobs that ask engA are checked; events have a list of their own.
  async preflight(jobs, read) {
    const sets = jobs
      .filter(({ job }) => job.engines.includes('engA') && job.type !== 'events')
      .map(({ at, job }) => ({ locations: job.locations, languages: job.languages, at: ['jobs', at] }));
    return sets.length === 0 ? { issues: [], warnings: [] } : checkSerpPlaces(read, sets);
  },
});
