import { z } from 'zod';

/**
 * Fields several job kinds share. Kept apart from the job files so each kind reads as a
 * list of what it asks for.
 */

/** Standard (queued, cheaper) or live (one call answers, dearer). */
export const modeSchema = z
  .enum(['standard', 'live'], { error: "'standard' (tasks queued, cheaper) or 'live' (answered at once, dearer)" })
  .default('standard')
  .describe('`standard` (default): tasks are posted and collected later, the cheaper way. `live`: each call answers at once and costs more.');

/** Kinds the service serves live only: the field is accepted (so a file can say it) but only as `live`. */
export const liveOnlyModeSchema = z
  .literal('live', { error: 'this kind is served live only; leave mode out or write live' })
  .default('live')
  .describe('Always `live`: the service has no task-based form of this data.');

export const prioritySchema = z
  .literal([1, 2], { error: '1 (normal) or 2 (high)' })
  .default(1)
  .describe('1: normal (default). 2: high priority, which costs extra.');

/** A domain or page a job asks about (labs, backlinks, keywords for site, on-page). */
export const targetSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(255, 'at most 255 characters')
  .refine((s) => !/\s/.test(s), { error: "a domain or URL without spaces, like 'example.com'" });

/** Extra request fields passed as they are; each task is still checked against the endpoint's rules. */
export const paramsSchema = z
  .record(z.string(), z.unknown())
  .default({})
  .describe('Extra request fields sent with every task as written (e.g. `limit`, `filters`); the endpoint rules still apply.');

/** Job labels for people and BI; stored with the run, never sent to the service. */
export const labelsSchema = z
  .array(z.string().trim().min(1, 'must not be empty').max(64, 'at most 64 characters'))
  .default([])
  .describe('Labels of the job (e.g. `brand`, `client-x`), stored with every task of the job in the warehouse; never sent.');
