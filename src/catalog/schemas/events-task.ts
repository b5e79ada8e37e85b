import { z } from 'zod';
import { locationCoordinate, serpTaskRules } from '../serp-task.js';
import { callbackFields, tagField } from './common.js';

/**
 * One task of `POST /v3/serp/engA/events/task_post`, field by field from the spec's table:
 * desktop only, `os` windows or macos, `date_range` from its list, `max_crawl_pages` up to
 * 100, `postback_data` advanced (examples also pass html). `url` may carry a full query address.
 */
export const eventsTaskSchema = z
  .object({
    keyword: z.string().min(1, 'must not be empty').max(700, 'at most 700 characters'),
    location_code: z.number().int().positive().optional(),
    location_name: z.string().min(1).optional(),
    location_coordinate: locationCoordinate.optional(),
    language_code: z.string().min(2).optional(),
    language_name: z.string().min(1).optional(),
    depth: z.number().int().min(1).max(700, 'at most 700').optional(),
    max_crawl_pages: z.number().int().min(1).max(100, 'at most 100').optional(),
    priority: z.union([z.literal(1), z.literal(2)]).optional(),
    os: z.enum(['windows', 'macos']).optional(),
    date_range: z.enum(['today', 'tomorrow', 'week', 'weekend', 'next_week', 'month', 'next_month']).optional(),
    se_domain: z.string().optional(),
    tag: tagField,
    ...callbackFields,
    postback_data: z.enum(['advanced', 'html']).optional(),
    url: z.string().url('an absolute URL').optional(),
  })
  .strict()
  .superRefine(serpTaskRules);
