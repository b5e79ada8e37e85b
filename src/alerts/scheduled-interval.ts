import { scheduledTicks } from './cron-ticks.js';

const DAY = 86_400_000;

/**
 * Days between two consecutive scheduled runs (the largest gap over two weeks of ticks, so
 * a weekdays-only schedule allows its weekend); 1 without a schedule. A rank move across a
 * longer gap between checks is marked as such.
 */
export function scheduledIntervalDays(p: { schedule?: string | undefined; timezone: string }, from: Date): number {
  if (!p.schedule) return 1;
  const ticks = scheduledTicks({ expression: p.schedule, timezone: p.timezone }, from, new Date(from.getTime() + 15 * DAY), 200);
  let most = 0;
  for (let i = 1; i < ticks.length; i++) most = Math.max(most, ticks[i]!.getTime() - ticks[i - 1]!.getTime());
  return most === 0 ? 1 : Math.max(1, Math.ceil(most / DAY - 1e-9));
}
