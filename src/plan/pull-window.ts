import { CronClock } from '../config/index.js';
import type { Plan } from './plan.js';
import { summarizePlan } from './plan-summary.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** A pull night the rate limits cannot finish before the next one starts. */
export interface PullTooLong {
  tasks: number;
  /** The least time the rate limits allow for the night's calls by pull, in hours (real time). */
  hours: number;
  /** Time between one night's start and the next one's, in hours: the schedule's, or 24. */
  windowHours: number;
  /** Where the window comes from, for the message: the schedule, or "a day" without one. */
  windowFrom: string;
  message: string;
}

export interface PullWindowOptions {
  /** The pipeline's cron schedule and its zone; without one, a night has a day. */
  schedule?: string;
  timezone?: string;
  now: Date;
  /** The rate-limit minute of this run in ms (60,000 for the service; shorter against a time-scaled emulator): the window scales with it. */
  minuteMs?: number;
}

/**
 * Whether a night collected by pull (tasks_ready, then one rate-limited `task_get` a task:
 * 60 calls a minute for the SERP, keyword and domain families, spec "Limits") can end before
 * the next night starts: the next two starts of the schedule after `now` apart, or 24 hours
 * without a schedule. Returns null when it can, else what to say: the hours pull would take
 * and that push (postbacks have no rate limit) is the way at that size.
 */
export function pullNightTooLong(plan: Plan, o: PullWindowOptions): PullTooLong | null {
  const minuteMs = o.minuteMs ?? MINUTE_MS;
  const summary = summarizePlan(plan, []);
  const ms = summary.minMinutes * minuteMs;
  let windowMs = (DAY_MS * minuteMs) / MINUTE_MS;
  let windowFrom = 'a day (no schedule)';
  if (o.schedule) {
    const [a, b] = new CronClock(o.schedule, o.timezone ?? 'UTC').next(o.now, 2);
    if (a && b) {
      windowMs = ((b.getTime() - a.getTime()) * minuteMs) / MINUTE_MS;
      windowFrom = `the schedule '${o.schedule}' (${o.timezone ?? 'UTC'})`;
    }
  }
  if (ms <= windowMs) return null;
  const hours = ms / (60 * minuteMs);
  const windowHours = windowMs / (60 * minuteMs);
  const busiest = summary.families.reduce((x, f) => (f.minutes > x.minutes ? f : x));
  const message =
    `collecting ${plan.tasks.length.toLocaleString('en-US')} tasks by pull takes at least ${hours.toFixed(1)} h under the rate limits ` +
    `(${busiest.calls.toLocaleString('en-US')} calls of the ${busiest.family} family at ${busiest.perMinute} a minute: a POST per batch and a task_get per task), ` +
    `longer than the ${windowHours.toFixed(1)} h between nights of ${windowFrom}, so the next night would start before this one ends. ` +
    `Nothing was bought. Use push (collection: mode: push, with public_url, and callback: postback): postbacks have no rate limit; or fewer tasks a night.`;
  return { tasks: plan.tasks.length, hours, windowHours, windowFrom, message };
}
