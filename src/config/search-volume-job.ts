import { z } from 'zod';
import { labelsSchema, modeSchema } from './job-fields.js';
import { jobNameSchema, keywordsFileOutsideSchema, keywordsFileSchema, languageSchema, locationSchema, requireKeywords } from './serp-job.js';

/**
 * Monthly search volumes of keywords (keywords-data `search_volume`): keywords × locations ×
 * languages, packed up to 700 keywords a task at one price. Feeds `search_volume_trends`.
 */
export const searchVolumeJobSchema = z
  .strictObject({
    kind: z.literal('search_volume').describe('Job kind. `search_volume`: monthly search volume of keywords (ads data).'),
    name: jobNameSchema,
    labels: labelsSchema,
    source: z
      .enum(['ads', 'engA'])
      .default('ads')
      .describe('`ads` (default): the ads platform volumes (engA_ads). `engA`: the engine\'s own search volume endpoint.'),
    mode: modeSchema,
    collect: z
      .literal('pull', { error: "a job's collect takes only pull; set push for the whole file with collection.mode at the top level" })
      .default('pull')
      .describe('Kept for older files: only `pull`. How results come back is set for the whole file by `collection.mode`.'),
    locations: z.array(locationSchema).min(1, 'at least one location').describe('A location_code (e.g. 2840) or a location_name.'),
    languages: z.array(languageSchema).min(1, 'at least one language').default(['en']).describe("A language code ('en') or name ('English')."),
    keywords: z
      .array(z.string().max(80, 'at most 80 characters').refine((s) => s.trim().length > 0, { error: 'must not be empty' }))
      .default([])
      .describe('Keywords; the planner lower-cases, de-duplicates and packs them 700 to a task.'),
    keywords_file: keywordsFileSchema,
    keywords_file_outside: keywordsFileOutsideSchema,
  })
  .superRefine(requireKeywords)
  .describe('Monthly search volume of keywords.');

export type SearchVolumeJobInput = z.input<typeof searchVolumeJobSchema>;
