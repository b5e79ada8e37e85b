import { createHash } from 'node:crypto';
import type { AlertRuleName } from '../config/index.js';
import type { RankSubject } from './rules/index.js';

export type { RankSubject } from './rules/index.js';

/**
 * An alert as the rules make it, before it is stored. Rank alerts carry their series;
 * run alerts their run; `missed_nights` only the pipeline.
 */
export interface AlertDraft {
  rule: AlertRuleName;
  pipeline: string;
  /** What it is about, in words (the `subject` column). */
  subject: string;
  series?: RankSubject;
  /** The run whose step made it (null from the scheduler's missed-nights check). */
  runId: string | null;
  /** `yyyy-mm-dd`: the check, the run's UTC day, or the first missed night. */
  checkDate: string;
  before: string | null;
  after: string | null;
  threshold: string;
  daysSincePrevious?: number | null;
  acrossGap?: boolean | null;
  /** One line of Slack mrkdwn. */
  message: string;
}

/** A stored alert with its delivery state (a row of the `alerts` table). */
export interface StoredAlert extends AlertDraft {
  id: string;
  createdAt: string;
  deliveryState: 'pending' | 'delivered';
  attempts: number;
  lastAttemptAt: string | null;
  lastError: string | null;
  deliveredAt: string | null;
}

/**
 * The alert's id: a hash of rule, pipeline, subject and date, so the same finding made again
 * (a rerun, a resumed run, a second build of the same night) is the same row. The subject is
 * the series and domain for rank rules, the run for run rules, the pipeline for missed nights.
 */
export function alertId(d: Pick<AlertDraft, 'rule' | 'pipeline' | 'series' | 'runId' | 'checkDate'>): string {
  const s = d.series;
  const subject = s
    ? [s.keyword, s.locationCode, s.languageCode, s.device, s.engine, s.domain]
    : d.rule === 'missed_nights'
      ? []
      : [d.runId];
  return createHash('sha256')
    .update(JSON.stringify([d.rule, d.pipeline, ...subject, d.checkDate]))
    .digest('hex')
    .slice(0, 24);
}
