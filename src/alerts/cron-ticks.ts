import cron from 'node-cron';
import { CronClock } from '../config/index.js';

const MINUTE = 60_000;

/**
 * Scheduled minutes of a cron expression in (`after`, `atOrBefore`], oldest first, at most
 * `max`. `CronClock.matches` costs a time-zone conversion, so only the UTC
 * minutes that can be a scheduled local minute are tried: zone offsets are whole quarter
 * hours, so a local minute m is a UTC minute m, m-15, m-30 or m-45. A nightly schedule is
 * 96 tries a day instead of 1,440.
 */
export function scheduledTicks(schedule: { expression: string; timezone: string }, after: Date, atOrBefore: Date, max: number): Date[] {
  const clock = new CronClock(schedule.expression, schedule.timezone);
  const candidates = candidateMinutes(schedule.expression);
  const out: Date[] = [];
  const start = Math.floor(after.getTime() / MINUTE) * MINUTE + MINUTE;
  for (let t = start; t <= atOrBefore.getTime() && out.length < max; t += MINUTE) {
    if (!candidates[new Date(t).getUTCMinutes()]) continue;
    if (clock.matches(new Date(t))) out.push(new Date(t));
  }
  return out;
}

function candidateMinutes(expression: string): boolean[] {
  const ok = new Array<boolean>(60).fill(false);
  let minutes: number[];
  try {
    minutes = cron.parse(expression).minute;
  } catch {
    return ok.fill(true);
  }
  for (const m of minutes) for (let k = 0; k < 4; k++) ok[(((m - 15 * k) % 60) + 60) % 60] = true;
  return ok;
}
