import { z } from 'zod';
import { endpoint } from '../../catalog/index.js';
import { jobBase, liveOnlyModeSchema, paramsSchema } from '../base-fields.js';
import { distinct, perKey, places } from '../expand.js';
import { defineJobKind } from '../job-kind.js';
import { keywordList, keywordsFileOutsideSchema, keywordsFileSchema, requireKeywords } from '../keyword-fields.js';
import { languagesField, locationsField, targetSchema } from '../place-fields.js';

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

/** Keyword labs: one request per keyword or target, location and language. */
export const labsJob = defineJobKind({
  kind: 'labs',
  schema: z
    .strictObject({
      ...jobBase('labs', 'keyword research data of the keyword labs (live only).'),
      mode: liveOnlyModeSchema,
      function: z
        .enum(LABS_NAMES, { error: `one of ${LABS_NAMES.join(', ')} (others through a generic \`endpoint\` job)` })
        .describe(`Labs function: ${LABS_NAMES.map((n) => `${n} (${LABS_FUNCTIONS[n]})`).join(', ')}.`),
      keywords: keywordList(700),
      keywords_file: keywordsFileSchema,
      keywords_file_outside: keywordsFileOutsideSchema,
      targets: z.array(targetSchema).default([]).describe('Domains for the target functions (ranked_keywords, competitors_domain, ...).'),
      locations: locationsField,
      languages: languagesField,
      params: paramsSchema,
    })
    .superRefine((j, ctx) => {
      const input = LABS_FUNCTIONS[j.function];
      if (input === 'target') {
        if (j.targets.length === 0)
          ctx.addIssue({ code: 'custom', path: ['targets'], message: `${j.function} asks about domains: at least one target` });
        if (j.keywords.length > 0 || j.keywords_file)
          ctx.addIssue({ code: 'custom', path: ['keywords'], message: `${j.function} takes targets, not keywords` });
      } else {
        requireKeywords(j, ctx);
        if (j.targets.length > 0) ctx.addIssue({ code: 'custom', path: ['targets'], message: `${j.function} takes keywords, not targets` });
      }
    })
    .describe('Keyword labs: one request per keyword or target, location and language.'),
  expand(job) {
    const ep = endpoint(`svc_labs.engA.${job.function}.live`);
    const input = LABS_FUNCTIONS[job.function];
    const pl = places(job.locations, job.languages);
    if (input === 'target')
      return { specs: perKey(ep, [...new Set(job.targets)], pl, (target) => ({ target }), job.params), repeatsDropped: 0 };
    const { list, repeats } = distinct(job.keywords);
    const body = input === 'keyword' ? (k: string) => ({ keyword: k }) : (k: string) => ({ keywords: [k] });
    return { specs: perKey(ep, list, pl, body, job.params), repeatsDropped: repeats * pl.length };
  },
});
