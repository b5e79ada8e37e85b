import { z } from 'zod';
import { endpoint } from '../../catalog/index.js';
import { jobBase, liveOnlyModeSchema, paramsSchema } from '../base-fields.js';
import { perKey } from '../expand.js';
import { defineJobKind } from '../job-kind.js';
import { targetsField } from '../place-fields.js';

/** Domains linking to a target: one request per distinct target. */
export const backlinksJob = defineJobKind({
  kind: 'backlinks',
  schema: z
    .strictObject({
      ...jobBase('backlinks', 'domains linking to a target (live only).'),
      mode: liveOnlyModeSchema,
      function: z
        .literal('referring_domains')
        .default('referring_domains')
        .describe('`referring_domains`, the backlinks function of the catalog.'),
      targets: targetsField,
      params: paramsSchema,
    })
    .describe('Backlinks: one request per target.'),
  expand(job) {
    const ep = endpoint(`backlinks.${job.function}.live`);
    return { specs: perKey(ep, [...new Set(job.targets)], [{}], (target) => ({ target }), job.params), repeatsDropped: 0 };
  },
});
