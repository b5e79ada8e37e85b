import { z } from 'zod';
import { endpoint, ON_PAGE_MAX_LIMIT, ON_PAGE_READ_REACH } from '../../catalog/index.js';
import { jobBase, paramsSchema, prioritySchema } from '../base-fields.js';
import { defineJobKind, type CrawlReads } from '../job-kind.js';
import { targetsField } from '../place-fields.js';

/** What an on-page job can read of a finished crawl. */
export const ON_PAGE_READS = ['pages', 'links', 'resources'] as const;

/** What is read of a crawl whose job is no longer in the file: all its pages (as far as the service's `offset` reaches). */
export const ON_PAGE_DEFAULT_READS: CrawlReads = { read: ['pages'], maxItems: ON_PAGE_READ_REACH };

/**
 * Crawls of sites: one task per distinct target. Crawls have no ready list: the run watches
 * them and, once finished, reads what `read` asks (see `crawl`).
 */
export const onPageJob = defineJobKind({
  kind: 'on_page',
  schema: z
    .strictObject({
      ...jobBase('on_page', 'crawl sites, then read their pages, links and resources.'),
      mode: z
        .literal('standard', { error: 'on-page crawls are tasks: standard only' })
        .default('standard')
        .describe('Always `standard`: a crawl is a task.'),
      priority: prioritySchema,
      targets: targetsField,
      max_crawl_pages: z
        .number()
        .int('a whole number')
        .min(1, 'at least 1')
        .max(1000, 'at most 1000')
        .default(100)
        .describe('Pages to crawl per target (default 100).'),
      read: z
        .array(z.enum(ON_PAGE_READS))
        .min(1, 'at least one of pages, links, resources')
        .default(['pages'])
        .describe('What to read once a crawl is finished: `pages` (default; charged), `links` (charged), `resources` (free).'),
      max_items: z
        .number()
        .int()
        .min(1)
        .max(ON_PAGE_READ_REACH, `at most ${ON_PAGE_READ_REACH} (the service's offset reaches 2000000, plus one page)`)
        .default(ON_PAGE_READ_REACH)
        .describe(
          `Most items read per crawl and kind; default: all of them, as far as the service's \`offset\` reaches (2000000, plus one page: ${ON_PAGE_READ_REACH}). A crawl with more than this is read to this many and the run's notes say so.`,
        ),
      page_size: z
        .number()
        .int()
        .min(1)
        .max(ON_PAGE_MAX_LIMIT, 'at most 1000')
        .default(ON_PAGE_MAX_LIMIT)
        .describe('Items per read call (default and most: 1000).'),
      params: paramsSchema,
    })
    .describe('On-page crawls: one task per target; collected when the crawl is finished (checked with the free resources call).'),
  expand(job) {
    const ep = endpoint('on_page.task_post');
    const specs = [...new Set(job.targets)].map((target) => ({
      endpoint: ep,
      spec: { target, max_crawl_pages: job.max_crawl_pages, ...job.params, ...(job.priority === 2 ? { priority: 2 } : {}) },
    }));
    return { specs, repeatsDropped: 0 };
  },
  crawl: {
    postEndpoint: 'on_page.task_post',
    reads: (job) => ({ read: job.read, maxItems: job.max_items, pageSize: job.page_size }),
    defaultReads: ON_PAGE_DEFAULT_READS,
  },
});
