import { z } from 'zod';

/**
 * The fields every job kind or several of them share, declared once. A kind's module
 * spreads {@link jobBase} first and picks the others it takes, so its schema reads as a
 * list of what it asks for.
 */

/** A job's optional name; shared by every job kind. */
export const jobNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'lower-case letters, digits, - and _, starting with a letter or digit')
  .max(64, 'at most 64 characters')
  .optional()
  .describe('Names the job in logs, the ledger and the warehouse. Default: `<kind>-<index>` (0-based).');

/** Job labels for people and BI; stored with the run, never sent to the service. */
export const labelsSchema = z
  .array(z.string().trim().min(1, 'must not be empty').max(64, 'at most 64 characters'))
  .default([])
  .describe('Labels of the job (e.g. `brand`, `client-x`), stored with every task of the job in the warehouse; never sent.');

/**
 * The head of every job: `kind` (the discriminator, documented per kind), `name` and
 * `labels`. Spread first into a kind's `z.strictObject`, so every kind lists them alike.
 */
export function jobBase<K extends string>(kind: K, doc: string) {
  return { kind: z.literal(kind).describe(`Job kind. \`${kind}\`: ${doc}`), name: jobNameSchema, labels: labelsSchema };
}

/** Standard (queued, cheaper) or live (one call answers, dearer). */
export const modeSchema = z
  .enum(['standard', 'live'], { error: "'standard' (tasks queued, cheaper) or 'live' (answered at once, dearer)" })
  .default('standard')
  .describe(
    '`standard` (default): tasks are posted and collected later, the cheaper way. `live`: each call answers at once and costs more.',
  );

/** Kinds the service serves live only: the field is accepted (so a file can say it) but only as `live`. */
export const liveOnlyModeSchema = z
  .literal('live', { error: 'this kind is served live only; leave mode out or write live' })
  .default('live')
  .describe('Always `live`: the service has no task-based form of this data.');

/** Task priority; 2 costs extra and applies to queued tasks only. */
export const prioritySchema = z
  .literal([1, 2], { error: '1 (normal) or 2 (high)' })
  .default(1)
  .describe('1: normal (default). 2: high priority, which costs extra.');

/** The per-job `collect` of older files: only `pull` is accepted; `collection.mode` decides for the file. */
export const legacyCollectSchema = z
  .literal('pull', { error: "a job's collect takes only pull; set push for the whole file with collection.mode at the top level" })
  .default('pull')
  .describe('Kept for older files: only `pull`. How results come back is set for the whole file by `collection.mode`.');

/** Extra request fields passed as they are; each task is still checked against the endpoint's rules. */
export const paramsSchema = z
  .record(z.string(), z.unknown())
  .default({})
  .describe('Extra request fields sent with every task as written (e.g. `limit`, `filters`); the endpoint rules still apply.');
