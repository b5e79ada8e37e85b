import { z } from 'zod';
import { endpoint } from '../../catalog/index.js';
import { jobBase, liveOnlyModeSchema } from '../base-fields.js';
import { packed, places } from '../expand.js';
import { defineJobKind } from '../job-kind.js';
import { checkAiPlaces } from '../reference.js';
import { keywordList, keywordsFileOutsideSchema, keywordsFileSchema, requireKeywords } from '../keyword-fields.js';
import { languagesField, locationsField } from '../place-fields.js';

/** The AI keyword data endpoint: its locations and languages come from its own list (spec), checked by the preflights. */
export const AI_VOLUME_ENDPOINT = 'ai_optimization.ai_keyword_data.keywords_search_volume.live';

/** How often keywords are asked of AI tools: keywords packed 1000 to a request at one price. */
export const aiVolumeJob = defineJobKind({
  kind: 'ai_volume',
  schema: z
    .strictObject({
      ...jobBase('ai_volume', 'how often keywords are asked of AI tools (live only).'),
      mode: liveOnlyModeSchema,
      keywords: keywordList(250),
      keywords_file: keywordsFileSchema,
      keywords_file_outside: keywordsFileOutsideSchema,
      locations: locationsField,
      languages: languagesField,
    })
    .superRefine(requireKeywords)
    .describe('AI keyword search volume: keywords packed 1000 to a request at one price.'),
  expand(job) {
    const ep = endpoint(AI_VOLUME_ENDPOINT);
    return packed(ep, job.keywords, ep.maxKeywordsPerTask ?? 1000, places(job.locations, job.languages), {});
  },
  // A location or language the service's own list lacks would be refused after the other tasks were paid for.
  async preflight(jobs, read) {
    const issues = await checkAiPlaces(
      read,
      jobs.map(({ at, job }) => ({ locations: job.locations, languages: job.languages, at: ['jobs', at] })),
    );
    return { issues, warnings: [] };
  },
});
