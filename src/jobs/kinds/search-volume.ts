import { z } from 'zod';
import { endpoint } from '../../catalog/index.js';
import { jobBase, legacyCollectSchema, modeSchema } from '../base-fields.js';
import { functionEndpoint, packed, places } from '../expand.js';
import { defineJobKind } from '../job-kind.js';
import { keywordsFileOutsideSchema, keywordsFileSchema, keywordSchema, requireKeywords } from '../keyword-fields.js';
import { languagesField, locationsField } from '../place-fields.js';

/**
 * Monthly search volumes of keywords (keywords-data `search_volume`): keywords × locations ×
 * languages, packed up to 700 keywords a task at one price. Feeds `search_volume_trends`.
 */
export const searchVolumeJobSchema = z
  .strictObject({
    ...jobBase('search_volume', 'monthly search volume of keywords (ads data).'),
    source: z
      .enum(['ads', 'engA'])
      .default('ads')
      .describe("`ads` (default): the ads platform volumes (engA_ads). `engA`: the engine's own search volume endpoint."),
    mode: modeSchema,
    collect: legacyCollectSchema,
    locations: locationsField,
    languages: languagesField,
    keywords: z
      .array(keywordSchema(80))
      .default([])
      .describe('Keywords; the planner lower-cases, de-duplicates and packs them 700 to a task.'),
    keywords_file: keywordsFileSchema,
    keywords_file_outside: keywordsFileOutsideSchema,
  })
  .superRefine(requireKeywords)
  .describe('Monthly search volume of keywords.');

/** What a user may write for a search-volume job. */
export type SearchVolumeJobInput = z.input<typeof searchVolumeJobSchema>;

/** Search volume: keywords sorted and packed to the endpoint's limit (700) per location and language. */
export const searchVolumeJob = defineJobKind({
  kind: 'search_volume',
  schema: searchVolumeJobSchema,
  expand(job) {
    const base = job.source === 'ads' ? 'keywords_data.engA_ads.search_volume' : 'keywords_data.engA.search_volume';
    const ep = functionEndpoint(base, job.mode);
    return packed(ep, job.keywords, endpoint(`${base}.task_post`).maxKeywordsPerTask ?? 700, places(job.locations, job.languages), {});
  },
});
