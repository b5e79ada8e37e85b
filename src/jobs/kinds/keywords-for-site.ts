import { z } from 'zod';
import { jobBase, modeSchema, paramsSchema, prioritySchema } from '../base-fields.js';
import { functionEndpoint, perKey, places, priorityOf } from '../expand.js';
import { defineJobKind } from '../job-kind.js';
import { languagesField, locationsField, targetsField } from '../place-fields.js';

/** Keywords the ads data relates to a domain or page: one task per target, location and language. */
export const keywordsForSiteJob = defineJobKind({
  kind: 'keywords_for_site',
  schema: z
    .strictObject({
      ...jobBase('keywords_for_site', 'keywords the ads data relates to a domain or page.'),
      mode: modeSchema,
      priority: prioritySchema,
      targets: targetsField,
      locations: locationsField,
      languages: languagesField,
      params: paramsSchema,
    })
    .describe('Keywords for a site (keywords data, ads).'),
  expand(job) {
    const ep = functionEndpoint('keywords_data.engA_ads.keywords_for_site', job.mode);
    const specs = perKey(
      ep,
      job.targets,
      places(job.locations, job.languages),
      (target) => ({ target, ...job.params }),
      priorityOf(job.mode, job.priority),
    );
    return { specs, repeatsDropped: 0 };
  },
});
