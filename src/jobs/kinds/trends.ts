import { z } from 'zod';
import { endpoint } from '../../catalog/index.js';
import { jobBase, liveOnlyModeSchema, paramsSchema } from '../base-fields.js';
import { packed, places } from '../expand.js';
import { defineJobKind } from '../job-kind.js';
import { keywordList, keywordsFileOutsideSchema, keywordsFileSchema, requireKeywords } from '../keyword-fields.js';
import { optionalLocationsField } from '../place-fields.js';

/** The trends functions of the catalog (`keywords_data.svc_trends.<function>.live`). */
export const TRENDS_FUNCTIONS = ['explore', 'subregion_interests', 'demography', 'merged_data'] as const;

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as yyyy-mm-dd');

/** Relative popularity of keywords over time: groups of 5 in the written order, one request each. */
export const trendsJob = defineJobKind({
  kind: 'trends',
  schema: z
    .strictObject({
      ...jobBase('trends', 'relative popularity of keywords over time (live only).'),
      mode: liveOnlyModeSchema,
      function: z
        .enum(TRENDS_FUNCTIONS)
        .default('explore')
        .describe('`explore` (default), `subregion_interests`, `demography` or `merged_data`.'),
      keywords: keywordList(100),
      keywords_file: keywordsFileSchema,
      keywords_file_outside: keywordsFileOutsideSchema,
      locations: optionalLocationsField,
      date_from: isoDate.optional().describe('First day, yyyy-mm-dd.'),
      date_to: isoDate.optional().describe('Last day, yyyy-mm-dd.'),
      params: paramsSchema,
    })
    .superRefine(requireKeywords)
    .superRefine((j, ctx) => {
      if (j.date_from && j.date_to && j.date_to < j.date_from)
        ctx.addIssue({ code: 'custom', path: ['date_to'], message: 'must not be before date_from' });
      j.locations.forEach((l, i) => {
        if (typeof l !== 'number')
          ctx.addIssue({ code: 'custom', path: ['locations', i], message: 'trends take a location_code (a number), not a name' });
      });
    })
    .describe('Trends: keywords are compared in groups of 5, in the order written (one request each).'),
  expand(job) {
    const ep = endpoint(`keywords_data.svc_trends.${job.function}.live`);
    const dates = { ...(job.date_from ? { date_from: job.date_from } : {}), ...(job.date_to ? { date_to: job.date_to } : {}) };
    // Written order kept: the five keywords of one request are compared with each other.
    return packed(ep, job.keywords, ep.maxKeywordsPerTask ?? 5, places(job.locations, []), { ...dates, ...job.params }, false);
  },
});
