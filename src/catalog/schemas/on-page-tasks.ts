import { z } from 'zod';
import { callbackFields, postbackRule, tagField, type IssueSink } from './common.js';

/** Filter operators of the on-page endpoints. */
export const FILTER_OPERATORS = ['regex', 'not_regex', '<', '<=', '>', '>=', '=', '<>', 'in', 'not_in', 'like', 'not_like'] as const;

/**
 * Checks an on-page filter expression: a condition `[field, operator, value]`, or a list of
 * conditions (or nested lists) joined by `"and"` / `"or"` placed between them. Returns the
 * number of conditions so the caller can apply the "at most 8" rule.
 */
export function checkFilters(value: unknown, path: PropertyKey[], ctx: IssueSink): number {
  if (!Array.isArray(value)) {
    ctx.addIssue({ code: 'custom', path, message: 'a filter array' });
    return 0;
  }
  if (typeof value[0] === 'string' && value.length === 3 && typeof value[1] === 'string' && !['and', 'or'].includes(value[1])) {
    if (!(FILTER_OPERATORS as readonly string[]).includes(value[1])) {
      ctx.addIssue({ code: 'custom', path: [...path, 1], message: `operator must be one of ${FILTER_OPERATORS.join(' ')}` });
    }
    return 1;
  }
  if (value.length === 0) {
    ctx.addIssue({ code: 'custom', path, message: 'at least one condition' });
    return 0;
  }
  let count = 0;
  value.forEach((item, i) => {
    if (i % 2 === 1) {
      if (item !== 'and' && item !== 'or')
        ctx.addIssue({ code: 'custom', path: [...path, i], message: 'conditions are joined by "and" or "or"' });
    } else {
      count += checkFilters(item, [...path, i], ctx);
    }
  });
  if (value.length % 2 === 0) ctx.addIssue({ code: 'custom', path, message: 'a join ("and"/"or") must sit between two conditions' });
  return count;
}

function filtersRule(field: string, max: number) {
  return (t: Record<string, unknown>, ctx: IssueSink) => {
    if (t[field] === undefined) return;
    const n = checkFilters(t[field], [field], ctx);
    if (n > max) ctx.addIssue({ code: 'custom', path: [field], message: `at most ${max} conditions` });
  };
}

const orderBy = z
  .array(z.string().regex(/^[A-Za-z0-9_.]+,(asc|desc)$/, 'format <field>,<asc or desc>'), 'an array of strings')
  .max(3, 'at most 3 rules');

/** Most items one on-page read call returns (`limit`, spec: at most 1000). */
export const ON_PAGE_MAX_LIMIT = 1000;
/** The deepest `offset` an on-page read takes (spec: at most 2000000); `search_after_token` reads only 20,000 deep. */
export const ON_PAGE_MAX_OFFSET = 2_000_000;
/** Most items of one kind of a crawl a client can read: a full page at the deepest offset. */
export const ON_PAGE_READ_REACH = ON_PAGE_MAX_OFFSET + ON_PAGE_MAX_LIMIT;

/** `on_page/resources` request (the spec's table): limit, offset, filters, order, deep reading. */
export const onPageResourcesTaskSchema = z
  .object({
    id: z.string().min(1, 'the task id returned by task_post'),
    url: z.string().min(1).optional(),
    limit: z.number().int().min(1, 'between 1 and 1000').max(ON_PAGE_MAX_LIMIT, 'at most 1000').optional(),
    offset: z.number().int().min(0, 'at least 0').max(ON_PAGE_MAX_OFFSET, 'at most 2000000').optional(),
    filters: z.array(z.unknown()).optional(),
    relevant_pages_filters: z.array(z.unknown()).optional(),
    order_by: orderBy.optional(),
    search_after_token: z.string().min(1).optional(),
    tag: tagField,
  })
  .strict()
  .superRefine((t, ctx) => {
    filtersRule('filters', 8)(t, ctx);
    filtersRule('relevant_pages_filters', 8)(t, ctx);
  });

/** `on_page/pages` and `on_page/links`: a crawl task id; filters at most 8 conditions, order 3 rules. */
export const onPageReadTaskSchema = z
  .object({
    id: z.string().min(1, 'the task id returned by task_post'),
    filters: z.array(z.unknown()).optional(),
    order_by: orderBy.optional(),
    tag: tagField,
  })
  .passthrough()
  .superRefine(filtersRule('filters', 8));

/** `on_page/task_post`: a crawl `target`; other fields are not shown by the spec. */
export const onPageTaskSchema = z
  .object({ target: z.string().min(1, 'must not be empty'), tag: tagField, ...callbackFields })
  .passthrough()
  .superRefine((t, ctx) => postbackRule(t, ctx));
