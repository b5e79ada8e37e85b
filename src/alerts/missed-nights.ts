import { CronClock } from '../config/index.js';
import { runQueries, type Warehouse } from '../warehouse/index.js';
import type { AlertDraft } from './alert.js';
import { scheduledTicks } from './cron-ticks.js';

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
/** How far back a streak's nights are counted. */
const COUNT_DAYS = 62;

/** What missed_nights needs of a pipeline: its name, schedule and the rule's N. */
export interface MissedNightsPipeline {
  name: string;
  schedule?: string | undefined;
  timezone: string;
  alerts?: { rules: { missed_nights?: number | undefined } } | undefined;
}

/** A pipeline's runs as far as missed_nights goes. */
export interface RunStart {
  startedAt: Date;
  state: string;
}

/**
 * The missed_nights alert of a pipeline at `now`, or null: the scheduled nights since its
 * last completed run (since its first run when none completed; nothing before a pipeline
 * ever ran) number at least N. The alert's date is the first missed night, so one streak
 * makes one alert however long it lasts. Pure (runs are passed in), for the scheduler and
 * for tests on a fake clock. A night whose run is still under way counts as missed: call
 * it when a run has ended without completing, or when a tick was skipped or missed.
 */
export function missedNights(p: MissedNightsPipeline, runs: readonly RunStart[], now: Date): AlertDraft | null {
  const n = p.alerts?.rules.missed_nights;
  if (n === undefined || !p.schedule || runs.length === 0) return null;
  const schedule = { expression: p.schedule, timezone: p.timezone };
  const completed = runs.filter((r) => r.state === 'completed').map((r) => r.startedAt.getTime());
  const lastDone = completed.length ? new Date(Math.max(...completed)) : null;
  // With no completed run, the first run's own tick counts as missed too.
  const anchor = lastDone ?? new Date(Math.min(...runs.map((r) => r.startedAt.getTime())) - MINUTE);
  const [first] = scheduledTicks(schedule, anchor, now, 1);
  if (!first) return null;
  // A long streak is counted over its last COUNT_DAYS days only (the first night, the id, stays).
  const from = Math.max(first.getTime() - MINUTE, now.getTime() - COUNT_DAYS * DAY);
  const missed = scheduledTicks(schedule, new Date(from), now, 10_000).length;
  const long = from > first.getTime() - MINUTE;
  if (missed < n) return null;
  const firstLocal = new CronClock(p.schedule, p.timezone).localKey(first);
  return {
    rule: 'missed_nights',
    pipeline: p.name,
    subject: `pipeline ${p.name}`,
    runId: null,
    checkDate: firstLocal.slice(0, 10),
    before: lastDone ? lastDone.toISOString() : null,
    after: `${missed}${long ? '+' : ''}`,
    threshold: String(n),
    message: `*${p.name}* has not completed a run for ${missed}${long ? '+' : ''} scheduled night(s) since ${firstLocal} ${p.timezone} (schedule "${p.schedule}"); last completed run: ${lastDone ? lastDone.toISOString() : 'never'}`,
  };
}

/** The runs of a pipeline from the `runs` table, for `missedNights`. */
export async function readRunStarts(wh: Warehouse, pipeline: string, exceptRunId?: string): Promise<RunStart[]> {
  return runQueries.runStarts(wh, pipeline, exceptRunId);
}
