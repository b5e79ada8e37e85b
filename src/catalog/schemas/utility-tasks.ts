import { z } from 'zod';
import { datetimeOrderRule, parseSpecDatetime, specDatetime, tagField } from './common.js';

/** A rule that depends on the current time (look-back windows), checked with an injected clock. */
export interface TimedIssue {
  path: string[];
  message: string;
}

const DAY = 86_400_000;

/** `{api}/errors` query: limit 1-1000, offset 0-100000000, a datetime window of the last 7 days. */
export const errorsQuerySchema = z
  .object({
    limit: z.number().int().min(1, 'between 1 and 1000').max(1000, 'between 1 and 1000').optional(),
    offset: z.number().int().min(0, 'between 0 and 100000000').max(100_000_000, 'between 0 and 100000000').optional(),
    filtered_function: z.string().min(1, 'must not be empty').optional(),
    datetime_from: specDatetime.optional(),
    datetime_to: specDatetime.optional(),
    /** Echoed in `data` like every task's tag (the spec's table does not list it; the emulator takes it). */
    tag: tagField,
  })
  .strict()
  .superRefine(datetimeOrderRule);

/** The time rules of the errors query: `datetime_from` not earlier than 7 days ago, nothing after now. */
export function errorsQueryTimeRules(task: Record<string, unknown>, now: Date): TimedIssue[] {
  const out: TimedIssue[] = [];
  const from = typeof task.datetime_from === 'string' ? parseSpecDatetime(task.datetime_from) : Number.NaN;
  const to = typeof task.datetime_to === 'string' ? parseSpecDatetime(task.datetime_to) : Number.NaN;
  if (from < now.getTime() - 7 * DAY) out.push({ path: ['datetime_from'], message: 'not earlier than 7 days ago' });
  if (from > now.getTime()) out.push({ path: ['datetime_from'], message: 'not later than now' });
  if (to > now.getTime()) out.push({ path: ['datetime_to'], message: 'not later than now' });
  return out;
}

/** `{api}/id_list` query: a datetime window, limit 1-1000, offset, sort, metadata flag. */
export const idListQuerySchema = z
  .object({
    datetime_from: specDatetime,
    datetime_to: specDatetime,
    limit: z.number().int().min(1, 'between 1 and 1000').max(1000, 'between 1 and 1000').optional(),
    offset: z.number().int().min(0, 'between 0 and 100000000').max(100_000_000, 'between 0 and 100000000').optional(),
    sort: z.enum(['asc', 'desc']).optional(),
    include_metadata: z.boolean().optional(),
    tag: tagField,
  })
  .strict()
  .superRefine(datetimeOrderRule);

/**
 * The same time of day `months` calendar months before `now` (UTC), clamped to the last day
 * of the target month: 31 March less one month is 28 (or 29) February, never 3 March, which
 * `setUTCMonth` would give and which would refuse valid windows. The look-back windows are
 * stated in months (id_list: 1 with metadata, 6 without); the client, the run and the
 * emulator all read them from here, so both sides agree on the day.
 */
export function monthsBefore(now: Date, months: number): number {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth() - months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(
    y,
    m,
    Math.min(now.getUTCDate(), lastDay),
    now.getUTCHours(),
    now.getUTCMinutes(),
    now.getUTCSeconds(),
    now.getUTCMilliseconds(),
  );
}

/** The time rules of id_list: 1 month back with metadata, 6 months without; nothing after now. */
export function idListQueryTimeRules(task: Record<string, unknown>, now: Date): TimedIssue[] {
  const out: TimedIssue[] = [];
  const from = typeof task.datetime_from === 'string' ? parseSpecDatetime(task.datetime_from) : Number.NaN;
  const to = typeof task.datetime_to === 'string' ? parseSpecDatetime(task.datetime_to) : Number.NaN;
  const meta = task.include_metadata === true;
  if (from < monthsBefore(now, meta ? 1 : 6)) {
    out.push({ path: ['datetime_from'], message: meta ? 'at most 1 month back when include_metadata is true' : 'at most 6 months back' });
  }
  if (from > now.getTime()) out.push({ path: ['datetime_from'], message: 'not after now' });
  if (to > now.getTime()) out.push({ path: ['datetime_to'], message: 'not after now' });
  return out;
}

/** One entry of `appendix/webhook_resend`: a task id (UUID); at most 100 per call. */
export const webhookResendTaskSchema = z.object({ id: z.string().uuid('a task id (UUID)') }).strict();
