import { z } from 'zod';
import { jobBase, modeSchema, paramsSchema, prioritySchema } from '../base-fields.js';
import { functionEndpoint, packed, places, priorityOf } from '../expand.js';
import { defineJobKind } from '../job-kind.js';
import { keywordList, keywordsFileOutsideSchema, keywordsFileSchema, keywordsPerTask, requireKeywords } from '../keyword-fields.js';
import { languagesField, locationsField } from '../place-fields.js';

/** Estimated ad traffic of keywords at a bid: keywords packed `keywords_per_task` to a task. */
export const adTrafficJob = defineJobKind({
  kind: 'ad_traffic',
  schema: z
    .strictObject({
      ...jobBase('ad_traffic', 'estimated ad impressions, clicks and cost of keywords at a bid.'),
      mode: modeSchema,
      priority: prioritySchema,
      keywords: keywordList(80),
      keywords_file: keywordsFileSchema,
      keywords_file_outside: keywordsFileOutsideSchema,
      keywords_per_task: keywordsPerTask(1000, 700, 'at most 1000'),
      bid: z.number().positive('a positive maximum cost per click').describe('Maximum cost per click the estimate assumes.'),
      match: z.enum(['exact', 'phrase', 'broad']).default('exact').describe('Keyword match type of the estimate.'),
      date_interval: z
        .enum(['next_week', 'next_month', 'next_quarter'])
        .optional()
        .describe('Forecast period; the service default when left out.'),
      locations: locationsField,
      languages: languagesField,
      params: paramsSchema,
    })
    .superRefine(requireKeywords)
    .describe('Ad traffic by keywords (keywords data, ads).'),
  expand(job) {
    const ep = functionEndpoint('keywords_data.engA_ads.ad_traffic_by_keywords', job.mode);
    const extra = {
      bid: job.bid,
      match: job.match,
      ...(job.date_interval ? { date_interval: job.date_interval } : {}),
      ...job.params,
      ...priorityOf(job.mode, job.priority),
    };
    return packed(ep, job.keywords, job.keywords_per_task, places(job.locations, job.languages), extra);
  },
});
