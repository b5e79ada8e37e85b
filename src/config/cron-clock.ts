import cron from 'node-cron';

const MINUTE = 60_000;

/**
 * Cron arithmetic on an injected clock: node-cron parses the expression and matches a
 * minute in the time zone (daylight-saving rules included); this walks minutes so the
 * scheduler can be driven by a fake clock in tests.
 */
export class CronClock {
  private readonly task;

  constructor(
    readonly expression: string,
    readonly timezone: string,
  ) {
    this.task = cron.createTask(expression, () => {}, { timezone });
  }

  /** Whether the minute holding `at` is a scheduled minute. */
  matches(at: Date): boolean {
    return this.task.match(floorMinute(at));
  }

  /** The next `count` scheduled minutes after `after`, looking at most `horizonDays` ahead. */
  next(after: Date, count: number, horizonDays = 400): Date[] {
    const out: Date[] = [];
    const end = after.getTime() + horizonDays * 1440 * MINUTE;
    for (let t = floorMinute(after).getTime() + MINUTE; t <= end && out.length < count; t += MINUTE) {
      if (this.task.match(new Date(t))) out.push(new Date(t));
    }
    return out;
  }

  /** The latest scheduled minute in (`after`, `atOrBefore`], or null. */
  latestBetween(after: Date, atOrBefore: Date): Date | null {
    for (let t = floorMinute(atOrBefore).getTime(); t > after.getTime(); t -= MINUTE) {
      if (this.task.match(new Date(t))) return new Date(t);
    }
    return null;
  }

  /** The wall-clock minute in the schedule's zone, e.g. `2026-10-25 01:30`: one run per local minute. */
  localKey(at: Date): string {
    const parts = new Intl.DateTimeFormat('en-CA', {
      timeZone: this.timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(at);
    const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
    return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
  }
}

export function floorMinute(d: Date): Date {
  return new Date(Math.floor(d.getTime() / MINUTE) * MINUTE);
}
