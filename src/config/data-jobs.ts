import { z } from 'zod';
import { labelsSchema, liveOnlyModeSchema, modeSchema, paramsSchema, prioritySchema, targetSchema } from './job-fields.js';
import { jobNameSchema, keywordsFileSchema, languageSchema, locationSchema, requireKeywords } from './serp-job.js';

/**
 * The named job kinds beyond SERP and search volume: one per common data family of the
 * service. Each lists what it asks for; the planner (src/plan/specs.ts) turns it into
 * task bodies, which are checked against the catalog's request rules before any call.
 */

const keywordList = (max: number) =>
  z
    .array(z.string().max(max, `at most ${max} characters`).refine((s) => s.trim().length > 0, { error: 'must not be empty' }))
    .default([])
    .describe(`Keywords (at most ${max} characters each); lower-cased and de-duplicated by the planner.`);

const locations = z.array(locationSchema).min(1, 'at least one location').describe('A location_code (e.g. 2840) or a location_name.');
const optionalLocations = z
  .array(locationSchema)
  .default([])
  .describe('Location codes or names; none means the service default (worldwide where it has one).');
const languages = z.array(languageSchema).min(1, 'at least one language').default(['en']).describe("A language code ('en') or name ('English').");
const targets = z.array(targetSchema).min(1, 'at least one target').describe("Domains or pages to ask about, e.g. 'example.com'.");
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as yyyy-mm-dd');

function perTask(max: number, dflt: number, what: string) {
  return z
    .number()
    .int('a whole number')
    .min(1, 'at least 1')
    .max(max, `at most ${max}`)
    .default(dflt)
    .describe(`Keywords packed into one task (${what}); default ${dflt}.`);
}

export const keywordsForSiteJobSchema = z
  .strictObject({
    kind: z.literal('keywords_for_site').describe('Job kind. `keywords_for_site`: keywords the ads data relates to a domain or page.'),
    name: jobNameSchema,
    labels: labelsSchema,
    mode: modeSchema,
    priority: prioritySchema,
    targets,
    locations,
    languages,
    params: paramsSchema,
  })
  .describe('Keywords for a site (keywords data, ads).');

export const keywordsForKeywordsJobSchema = z
  .strictObject({
    kind: z.literal('keywords_for_keywords').describe('Job kind. `keywords_for_keywords`: keyword ideas from seed keywords (ads data).'),
    name: jobNameSchema,
    labels: labelsSchema,
    mode: modeSchema,
    priority: prioritySchema,
    keywords: keywordList(80),
    keywords_file: keywordsFileSchema,
    keywords_per_task: perTask(20, 20, 'seed keywords a task, at most 20'),
    locations,
    languages,
    params: paramsSchema,
  })
  .superRefine(requireKeywords)
  .describe('Keywords for keywords (keywords data, ads).');

export const adTrafficJobSchema = z
  .strictObject({
    kind: z.literal('ad_traffic').describe('Job kind. `ad_traffic`: estimated ad impressions, clicks and cost of keywords at a bid.'),
    name: jobNameSchema,
    labels: labelsSchema,
    mode: modeSchema,
    priority: prioritySchema,
    keywords: keywordList(80),
    keywords_file: keywordsFileSchema,
    keywords_per_task: perTask(1000, 700, 'at most 1000'),
    bid: z.number().positive('a positive maximum cost per click').describe('Maximum cost per click the estimate assumes.'),
    match: z.enum(['exact', 'phrase', 'broad']).default('exact').describe('Keyword match type of the estimate.'),
    date_interval: z.enum(['next_week', 'next_month', 'next_quarter']).optional().describe('Forecast period; the service default when left out.'),
    locations,
    languages,
    params: paramsSchema,
  })
  .superRefine(requireKeywords)
  .describe('Ad traffic by keywords (keywords data, ads).');

export const TRENDS_FUNCTIONS = ['explore', 'subregion_interests', 'demography', 'merged_data'] as const;

export const trendsJobSchema = z
  .strictObject({
    kind: z.literal('trends').describe('Job kind. `trends`: relative popularity of keywords over time (live only).'),
    name: jobNameSchema,
    labels: labelsSchema,
    mode: liveOnlyModeSchema,
    function: z.enum(TRENDS_FUNCTIONS).default('explore').describe('`explore` (default), `subregion_interests`, `demography` or `merged_data`.'),
    keywords: keywordList(100),
    keywords_file: keywordsFileSchema,
    locations: optionalLocations,
    date_from: isoDate.optional().describe('First day, yyyy-mm-dd.'),
    date_to: isoDate.optional().describe('Last day, yyyy-mm-dd.'),
    params: paramsSchema,
  })
  .superRefine(requireKeywords)
  .superRefine((j, ctx) => {
    if (j.date_from && j.date_to && j.date_to < j.date_from) ctx.addIssue({ code: 'custom', path: ['date_to'], message: 'must not be before date_from' });
    j.locations.forEach((l, i) => {
      if (typeof l !== 'number') ctx.addIssue({ code: 'custom', path: ['locations', i], message: 'trends take a location_code (a number), not a name' });
    });
  })
  .describe('Trends: keywords are compared in groups of 5, in the order written (one request each).');

/** Which input each labs function takes, as the sandbox table and result shapes show. */
export const LABS_FUNCTIONS = {
  related_keywords: 'keyword',
  keyword_suggestions: 'keyword',
  keyword_ideas: 'keywords',
  serp_competitors: 'keywords',
  ranked_keywords: 'target',
  relevant_pages: 'target',
  subdomains: 'target',
  competitors_domain: 'target',
  categories_for_domain: 'target',
} as const satisfies Record<string, 'keyword' | 'keywords' | 'target'>;
const LABS_NAMES = Object.keys(LABS_FUNCTIONS) as [keyof typeof LABS_FUNCTIONS, ...Array<keyof typeof LABS_FUNCTIONS>];

export const labsJobSchema = z
  .strictObject({
    kind: z.literal('labs').describe('Job kind. `labs`: keyword research data of the keyword labs (live only).'),
    name: jobNameSchema,
    labels: labelsSchema,
    mode: liveOnlyModeSchema,
    function: z
      .enum(LABS_NAMES, { error: `one of ${LABS_NAMES.join(', ')} (others through a generic \`endpoint\` job)` })
      .describe(`Labs function: ${LABS_NAMES.map((n) => `${n} (${LABS_FUNCTIONS[n]})`).join(', ')}.`),
    keywords: keywordList(700),
    keywords_file: keywordsFileSchema,
    targets: z.array(targetSchema).default([]).describe('Domains for the target functions (ranked_keywords, competitors_domain, ...).'),
    locations,
    languages,
    params: paramsSchema,
  })
  .superRefine((j, ctx) => {
    const input = LABS_FUNCTIONS[j.function];
    if (input === 'target') {
      if (j.targets.length === 0) ctx.addIssue({ code: 'custom', path: ['targets'], message: `${j.function} asks about domains: at least one target` });
      if (j.keywords.length > 0 || j.keywords_file) ctx.addIssue({ code: 'custom', path: ['keywords'], message: `${j.function} takes targets, not keywords` });
    } else {
      requireKeywords(j, ctx);
      if (j.targets.length > 0) ctx.addIssue({ code: 'custom', path: ['targets'], message: `${j.function} takes keywords, not targets` });
    }
  })
  .describe('Keyword labs: one request per keyword or target, location and language.');

export const backlinksJobSchema = z
  .strictObject({
    kind: z.literal('backlinks').describe('Job kind. `backlinks`: domains linking to a target (live only).'),
    name: jobNameSchema,
    labels: labelsSchema,
    mode: liveOnlyModeSchema,
    function: z.literal('referring_domains').default('referring_domains').describe('`referring_domains`, the backlinks function of the catalog.'),
    targets,
    params: paramsSchema,
  })
  .describe('Backlinks: one request per target.');

export const aiVolumeJobSchema = z
  .strictObject({
    kind: z.literal('ai_volume').describe('Job kind. `ai_volume`: how often keywords are asked of AI tools (live only).'),
    name: jobNameSchema,
    labels: labelsSchema,
    mode: liveOnlyModeSchema,
    keywords: keywordList(250),
    keywords_file: keywordsFileSchema,
    locations,
    languages,
  })
  .superRefine(requireKeywords)
  .describe('AI keyword search volume: keywords packed 1000 to a request at one price.');

export const llmResponsesJobSchema = z
  .strictObject({
    kind: z.literal('llm_responses').describe('Job kind. `llm_responses`: answers of language models to prompts (live only).'),
    name: jobNameSchema,
    labels: labelsSchema,
    mode: liveOnlyModeSchema,
    prompts: z
      .array(z.string().min(1, 'must not be empty').max(500, 'at most 500 characters'))
      .min(1, 'at least one prompt')
      .describe('Prompts (at most 500 characters each); each is asked of every model.'),
    models: z.array(z.string().min(1, 'must not be empty')).min(1, 'at least one model').describe('Model names (`model_name` of the service).'),
    max_output_tokens: z.number().int().min(16, 'at least 16').max(4096, 'at most 4096').optional().describe('Output token cap, 16 to 4096.'),
    web_search: z.boolean().optional().describe('Let the model search the web.'),
    params: paramsSchema,
  })
  .describe('LLM responses: one request per prompt and model.');

export const embeddingsJobSchema = z
  .strictObject({
    kind: z.literal('embeddings').describe('Job kind. `embeddings`: `/v1/embeddings` vectors of the keywords the other jobs collected.'),
    name: jobNameSchema,
    labels: labelsSchema,
    model: z.enum(['text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002']).default('text-embedding-3-small').describe('Embedding model.'),
    dimensions: z.number().int().min(8, 'at least 8').max(3072, 'at most 3072').default(256).describe('Vector size (text-embedding-3-* only; ada-002 is 1536).'),
    batch_size: z.number().int().min(1).max(2048).default(100).describe('Keywords per embeddings call.'),
  })
  .superRefine((j, ctx) => {
    if (j.model === 'text-embedding-ada-002' && j.dimensions !== 1536) ctx.addIssue({ code: 'custom', path: ['dimensions'], message: 'text-embedding-ada-002 has 1536 dimensions only' });
  })
  .describe('Embeddings of every keyword of this pipeline, after its other jobs are collected; cached by model, dimensions and text, so each keyword is bought once.');

export const ON_PAGE_READS = ['pages', 'links', 'resources'] as const;

export const onPageJobSchema = z
  .strictObject({
    kind: z.literal('on_page').describe('Job kind. `on_page`: crawl sites, then read their pages, links and resources.'),
    name: jobNameSchema,
    labels: labelsSchema,
    mode: z.literal('standard', { error: 'on-page crawls are tasks: standard only' }).default('standard').describe('Always `standard`: a crawl is a task.'),
    priority: prioritySchema,
    targets,
    max_crawl_pages: z.number().int('a whole number').min(1, 'at least 1').max(1000, 'at most 1000').default(100).describe('Pages to crawl per target (default 100).'),
    read: z
      .array(z.enum(ON_PAGE_READS))
      .min(1, 'at least one of pages, links, resources')
      .default(['pages'])
      .describe('What to read once a crawl is finished: `pages` (default; charged), `links` (charged), `resources` (free).'),
    max_items: z
      .number()
      .int()
      .min(1)
      .max(20_000, 'at most 20000 (the deep-reading limit)')
      .default(20_000)
      .describe('Most items read per crawl and kind (deep reading goes to 20000).'),
    page_size: z.number().int().min(1).max(1000, 'at most 1000').default(1000).describe('Items per read call (default and most: 1000).'),
    params: paramsSchema,
  })
  .describe('On-page crawls: one task per target; collected when the crawl is finished (checked with the free resources call).');
