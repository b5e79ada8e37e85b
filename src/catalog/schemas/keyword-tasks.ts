import { z } from 'zod';
import { callbackFields, isoDate, postbackRule, requireOneOf, tagField } from './common.js';

/**
 * Batch search volume (`keywords_data/.../search_volume`): up to 700 keywords per task at
 * equal price (Limits table). Other fields are not shown by the spec and pass through.
 */
export const searchVolumeTaskSchema = z
  .object({
    keywords: z
      .array(z.string().min(1, 'must not be empty'), 'an array of strings')
      .min(1, 'at least one keyword')
      .max(700, 'at most 700 keywords per task'),
    location_code: z.number().int().positive().optional(),
    location_name: z.string().min(1).optional(),
    language_code: z.string().min(2).optional(),
    language_name: z.string().min(1).optional(),
    tag: tagField,
    ...callbackFields,
  })
  .passthrough()
  .superRefine((t, ctx) => postbackRule(t, ctx));

/**
 * Keyword search volume in AI tools (the spec's table): at most 1000 keywords of at most 250
 * characters, a location and a language each given by name or code, `tag` up to 255.
 */
export const aiKeywordVolumeTaskSchema = z
  .object({
    keywords: z
      .array(z.string().min(1, 'must not be empty').max(250, 'at most 250 characters'), 'an array of strings')
      .min(1, 'at least one keyword')
      .max(1000, 'at most 1000 keywords'),
    location_name: z.string().min(1).optional(),
    location_code: z.number().int().positive().optional(),
    language_name: z.string().min(1).optional(),
    language_code: z.string().min(1).optional(),
    tag: tagField,
  })
  .passthrough()
  .superRefine((t, ctx) => {
    requireOneOf(t, ['location_name', 'location_code'], ctx);
    requireOneOf(t, ['language_name', 'language_code'], ctx);
  });

/** Trends (`keywords_data/svc_trends/*\/live`): up to 5 keywords compared, a date range. */
export const trendsTaskSchema = z
  .object({
    keywords: z
      .array(z.string().min(1, 'must not be empty'), 'an array of strings')
      .min(1, 'at least one keyword')
      .max(5, 'at most 5 keywords compared in one request'),
    location_code: z.number().int().positive().optional(),
    date_from: isoDate.optional(),
    date_to: isoDate.optional(),
    tag: tagField,
  })
  .passthrough()
  .superRefine((t, ctx) => {
    if (t.date_from && t.date_to && t.date_to < t.date_from) {
      ctx.addIssue({ code: 'custom', path: ['date_to'], message: 'must not be before date_from' });
    }
  });

/** Keywords for keywords: a keyword list; further fields not shown by the spec. */
export const keywordsForKeywordsTaskSchema = z
  .object({
    keywords: z.array(z.string().min(1, 'must not be empty'), 'an array of strings').min(1, 'at least one keyword'),
    tag: tagField,
    ...callbackFields,
  })
  .passthrough()
  .superRefine((t, ctx) => postbackRule(t, ctx));

/** Keywords for site: a target domain or page; further fields not shown by the spec. */
export const keywordsForSiteTaskSchema = z
  .object({ target: z.string().min(1, 'must not be empty'), tag: tagField, ...callbackFields })
  .passthrough()
  .superRefine((t, ctx) => postbackRule(t, ctx));
