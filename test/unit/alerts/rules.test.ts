import { describe, expect, it } from 'vitest';
import {
  alertId,
  evaluateRankRules,
  evaluateRunRules,
  missedNights,
  scheduledIntervalDays,
  type RankObservation,
} from '../../../src/alerts/index.js';

const ctx = { pipeline: 'shop', runId: 'run-2', intervalDays: 1 };

/** a.com on "trail shoes", checked 100 deep on consecutive days, ranked 4 then 5. */
function obs(o: Partial<RankObservation> = {}): RankObservation {
  return {
    keyword: 'trail shoes',
    locationCode: 2840,
    languageCode: 'en',
    device: 'desktop',
    engine: 'engA',
    domain: 'a.com',
    checkDate: '2026-01-02',
    previousCheckDate: '2026-01-01',
    daysSincePrevious: 1,
    rank: 5,
    previousRank: 4,
    url: 'https://a.com/one',
    previousUrl: 'https://a.com/one',
    depth: 100,
    previousDepth: 100,
    pageRanked: 30,
    ...o,
  };
}

const rulesOf = (alerts: { rule: string }[]) => alerts.map((a) => a.rule);

describe('rank rules', () => {
  const all = { enters_top: 10, leaves_top: 10, rank_drop: 3, rank_gain: 3, lost: true, url_changed: true } as const;

  it('a small move makes nothing; a drop out of the top 10 makes leaves_top and rank_drop with before and after', () => {
    expect(evaluateRankRules([obs()], all, ctx)).toEqual([]);
    const out = evaluateRankRules([obs({ rank: 12 })], all, ctx);
    expect(rulesOf(out)).toEqual(['leaves_top', 'rank_drop']);
    expect(out[1]).toMatchObject({ before: '#4', after: '#12', threshold: '3', checkDate: '2026-01-02', acrossGap: false, runId: 'run-2' });
    expect(out[1]!.message).toBe('*a.com* dropped 8 places for "trail shoes" (2840 en, desktop, engA): #4 → #12 on 2026-01-02');
  });

  it('a rise into the top 10 makes enters_top and rank_gain, also from beyond the previous depth', () => {
    expect(rulesOf(evaluateRankRules([obs({ previousRank: 15, rank: 7 })], all, ctx))).toEqual(['enters_top', 'rank_gain']);
    const fromBeyond = evaluateRankRules([obs({ previousRank: null, previousUrl: null, previousDepth: 20, rank: 6 })], all, ctx);
    expect(rulesOf(fromBeyond)).toEqual(['enters_top', 'rank_gain']);
    expect(fromBeyond[1]).toMatchObject({ before: 'beyond 20', after: '#6' });
    expect(fromBeyond[1]!.message).toContain('rose 15+ places');
  });

  it('a domain absent from the check is "beyond N" (never 0) and lost only when the check looked deeper than its old rank', () => {
    const gone = evaluateRankRules([obs({ rank: null, url: null, previousRank: 8 })], all, ctx);
    expect(rulesOf(gone)).toEqual(['leaves_top', 'rank_drop', 'lost']);
    expect(gone.every((a) => a.after === 'beyond 100')).toBe(true);
    expect(gone.some((a) => /→ 0\b|#0/.test(a.message))).toBe(false);
    // Ranked 40 yesterday; today's check looked 10 deep: absent says nothing about rank 40.
    expect(evaluateRankRules([obs({ rank: null, url: null, previousRank: 40, depth: 10 })], all, ctx)).toEqual([]);
    // Ranked 4, absent from a check 5 deep: lost, but whether it is still in the top 10 is unknown.
    expect(
      rulesOf(evaluateRankRules([obs({ rank: null, url: null, previousRank: 4, depth: 5 })], { leaves_top: 10, lost: true }, ctx)),
    ).toEqual(['lost']);
    // Lost from a look of 100 is "no longer ranked"; from a shallower one (a competitor followed to 30), within what was looked at.
    expect(gone.find((a) => a.rule === 'lost')!.message).toContain('is no longer ranked for');
    const past30 = evaluateRankRules([obs({ rank: null, url: null, previousRank: 28, depth: 30 })], { lost: true }, ctx);
    expect(past30[0]!.message).toContain('is no longer ranked within the 30 looked at for');
    expect(past30[0]!.after).toBe('beyond 30');
  });

  it('says nothing about a first check or an empty page (a failed check)', () => {
    expect(evaluateRankRules([obs({ previousCheckDate: null, previousRank: null, daysSincePrevious: null, rank: 1 })], all, ctx)).toEqual(
      [],
    );
    expect(evaluateRankRules([obs({ rank: null, url: null, pageRanked: 0 })], all, ctx)).toEqual([]);
  });

  it('marks a move across a gap longer than one scheduled interval', () => {
    const [drop] = evaluateRankRules([obs({ rank: 12, daysSincePrevious: 3, previousCheckDate: '2025-12-30' })], { rank_drop: 3 }, ctx);
    expect(drop).toMatchObject({ acrossGap: true, daysSincePrevious: 3 });
    expect(drop!.message).toContain('across a gap: the previous check was 3 days earlier, on 2025-12-30; not a one-night move');
    // A weekly schedule: 7 days between checks is the plan, not a gap.
    const [weekly] = evaluateRankRules([obs({ rank: 12, daysSincePrevious: 7 })], { rank_drop: 3 }, { ...ctx, intervalDays: 7 });
    expect(weekly!.acrossGap).toBe(false);
  });

  it('url_changed ignores a trailing slash, www. and the host case, but not a new path', () => {
    expect(evaluateRankRules([obs({ url: 'https://WWW.a.com/one/' })], { url_changed: true }, ctx)).toEqual([]);
    const [changed] = evaluateRankRules([obs({ url: 'https://a.com/two' })], { url_changed: true }, ctx);
    expect(changed).toMatchObject({ rule: 'url_changed', before: 'https://a.com/one', after: 'https://a.com/two' });
  });

  it('an id is the same for the same rule, subject and date, whatever the run or values', () => {
    const [a] = evaluateRankRules([obs({ rank: 12 })], { rank_drop: 3 }, ctx);
    const [b] = evaluateRankRules([obs({ rank: 20 })], { rank_drop: 5 }, { ...ctx, runId: 'run-3' });
    expect(alertId(a!)).toBe(alertId(b!));
    const [other] = evaluateRankRules([obs({ rank: 12, checkDate: '2026-01-03' })], { rank_drop: 3 }, ctx);
    expect(alertId(other!)).not.toBe(alertId(a!));
  });
});

describe('run rules', () => {
  const facts = {
    pipeline: 'shop',
    runId: 'r1',
    runDate: '2026-01-02',
    state: 'completed' as const,
    stopReason: null,
    estimateCny: 2,
    chargedNetCny: 2.1,
  };

  it('spend over the line and over the estimate factor; a completed run within both makes nothing', () => {
    expect(evaluateRunRules(facts, { spend_over_cny: 5, estimate_exceeded: 1.2, run_not_completed: true })).toEqual([]);
    const out = evaluateRunRules({ ...facts, chargedNetCny: 6 }, { spend_over_cny: 5, estimate_exceeded: 1.2 });
    expect(out.map((a) => [a.rule, a.before, a.after])).toEqual([
      ['spend_over_cny', null, '6.0000'],
      ['estimate_exceeded', '2.0000', '6.0000'],
    ]);
    expect(out[1]!.message).toContain('3.00x its estimate of 2.0000 CNY');
    // No estimate: nothing to exceed.
    expect(evaluateRunRules({ ...facts, estimateCny: null, chargedNetCny: 6 }, { estimate_exceeded: 1.2 })).toEqual([]);
  });

  it('a partial run (the budget) is not completed, with its reason', () => {
    const [a] = evaluateRunRules({ ...facts, state: 'partial', stopReason: 'budget of 5 CNY reached' }, { run_not_completed: true });
    expect(a).toMatchObject({ rule: 'run_not_completed', after: 'partial', subject: 'run r1' });
    expect(a!.message).toContain('ended partial: budget of 5 CNY reached');
  });
});

describe('missed_nights', () => {
  const p = { name: 'shop', schedule: '0 3 * * *', timezone: 'Europe/London', alerts: { rules: { missed_nights: 2 } } };
  const at = (iso: string) => new Date(iso);

  it('counts scheduled nights since the last completed run; one streak has one id', () => {
    const runs = [
      { startedAt: at('2026-01-10T03:00:05Z'), state: 'completed' },
      { startedAt: at('2026-01-11T03:00:05Z'), state: 'failed' },
    ];
    expect(missedNights(p, runs, at('2026-01-11T09:00:00Z'))).toBeNull();
    const two = missedNights(p, runs, at('2026-01-12T09:00:00Z'));
    expect(two).toMatchObject({ rule: 'missed_nights', checkDate: '2026-01-11', after: '2', threshold: '2' });
    const three = missedNights(p, runs, at('2026-01-13T09:00:00Z'));
    expect(three!.after).toBe('3');
    expect(alertId(three!)).toBe(alertId(two!));
    // A completed run ends the streak.
    expect(
      missedNights(p, [...runs, { startedAt: at('2026-01-13T03:00:05Z'), state: 'completed' }], at('2026-01-13T09:00:00Z')),
    ).toBeNull();
  });

  it('a pipeline that never ran has missed nothing; one that never completed counts from its first run', () => {
    expect(missedNights(p, [], at('2026-01-13T09:00:00Z'))).toBeNull();
    const never = missedNights(p, [{ startedAt: at('2026-01-12T03:00:01Z'), state: 'partial' }], at('2026-01-13T09:00:00Z'));
    expect(never).toMatchObject({ checkDate: '2026-01-12', after: '2' });
    expect(never!.message).toContain('last completed run: never');
  });

  it('the scheduled interval of a nightly, a weekly and no schedule', () => {
    const from = at('2026-01-05T00:00:00Z');
    expect(scheduledIntervalDays({ schedule: '0 3 * * *', timezone: 'UTC' }, from)).toBe(1);
    expect(scheduledIntervalDays({ schedule: '0 3 * * 1', timezone: 'UTC' }, from)).toBe(7);
    expect(scheduledIntervalDays({ timezone: 'UTC' }, from)).toBe(1);
  });
});
