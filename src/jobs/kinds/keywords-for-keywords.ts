import { z } from 'zod';
import { jobBase, modeSchema, paramsSchema, prioritySchema } from '../base-fields.js';
import { functionEndpoint, packed, places, priorityOf } from '../expand.js';
import { defineJobKind } from '../job-kind.js';
import { keywordList, keywordsFileOutsideSchema, keywordsFileSchema, keywordsPerTask, requireKeywords } from '../keyword-fields.js';
import { languagesField, locationsField } from '../place-fields.js';

/** Keyword ideas from seed keywords: seeds packed `keywords_per_task` (at most 20) to a task. */
export const keywordsForKeywordsJob = defineJobKind({
  kind: 'keywords_for_keywords',
  schema: z
    .strictObject({
      ...jobBase('keywords_for_keywords', 'keyword ideas from seed keywords (ads data).'),
      mode: modeSchema,
      priority: prioritySchema,
      keywords: keywordList(80),
      keywords_file: keywordsFileSchema,
      keywords_file_outside: keywordsFileOutsideSchema,
      keywords_per_task: keywordsPerTask(20, 20, 'seed keywords a task, at most 20'),
      locations: locationsField,
      languages: languagesField,
      params: paramsSchema,
    })
    .superRefine(requireKeywords)
    .describe('Keywords for keywords (keywords data, ads).'),
  expand(job) {
    const ep = functionEndpoint('keywords_data.engA_ads.keywords_for_keywords', job.mode);
    return packed(ep, job.keywords, job.keywords_per_task, places(job.locations, job.languages), {
      ...job.params,
      ...priorityOf(job.mode, job.priority),
    });
  },
});
