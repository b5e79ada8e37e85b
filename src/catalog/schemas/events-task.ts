import { z } from 'zod';
import { serpTaskRules, serpTaskShape } from '../serp-task.js';

/**
 * One task of `POST /v3/serp/engA/events/task_post`, field by field from the spec's table:
 * desktop only, `os` windows or macos, `date_range` from its list, `max_crawl_pages` up to
 * 100, `postback_data` advanced (examples also pass html). `url` may carry a full query address.
 */
export const eventsTaskSchema = z
  .object(serpTaskShape)
  .omit({ device: true }) // desktop only
  .extend({
    max_crawl_pages: z.number().int().min(1).max(100, 'at most 100').optional(),
    os: z.enum(['windows', 'macos']).optional(),
    date_range: z.enum(['today', 'tomorrow', 'week', 'weekend', 'next_week', 'month', 'next_month']).optional(),
    postback_data: z.enum(['advanced', 'html']).optional(),
    url: z.string().url('an absolute URL').optional(),
  })
  .strict()
  .superRefine(serpTaskRules);
