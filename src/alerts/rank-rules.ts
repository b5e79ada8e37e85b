import type { AlertRuleName, AlertRules } from '../config/index.js';
import type { AlertDraft } from './alert.js';
import { place, RANK_RULES, ruleValue, type RankObservation } from './rules/index.js';

export interface RankRuleContext {
  pipeline: string;
  runId: string | null;
  /** Days between two scheduled checks (1 for a nightly or unscheduled pipeline): a longer gap is marked. */
  intervalDays: number;
}

/**
 * The rank rules (src/alerts/rules, in registry order) over the tracked domains of a run's
 * checks. Pure, so every rule is unit-tested without a warehouse. No false alarms: nothing is said about a series' first
 * check, an empty page (treated as a failed check), or a place deeper than a check looked
 * (a domain absent from a check ranks "beyond N", never 0); a move across a gap longer than
 * one scheduled interval says so.
 */
export function evaluateRankRules(observations: readonly RankObservation[], rules: AlertRules, ctx: RankRuleContext): AlertDraft[] {
  const out: AlertDraft[] = [];
  for (const o of observations) {
    if (o.previousCheckDate === null || o.pageRanked === 0) continue;
    const before = place(o.previousRank, o.previousDepth);
    const after = place(o.rank, o.depth);
    const acrossGap = o.daysSincePrevious !== null && o.daysSincePrevious > ctx.intervalDays;
    const add = (rule: AlertDraft['rule'], threshold: string, what: string, values = { before, after }) => {
      const gap = acrossGap
        ? ` _(across a gap: the previous check was ${o.daysSincePrevious} days earlier, on ${o.previousCheckDate}; not a one-night move)_`
        : '';
      out.push({
        rule,
        pipeline: ctx.pipeline,
        subject: `${o.keyword} / ${o.locationCode} ${o.languageCode} / ${o.device} / ${o.engine} / ${o.domain}`,
        series: {
          keyword: o.keyword,
          locationCode: o.locationCode,
          languageCode: o.languageCode,
          device: o.device,
          engine: o.engine,
          domain: o.domain,
        },
        runId: ctx.runId,
        checkDate: o.checkDate,
        before: values.before,
        after: values.after,
        threshold,
        daysSincePrevious: o.daysSincePrevious,
        acrossGap,
        message: `*${o.domain}* ${what} for "${o.keyword}" (${o.locationCode} ${o.languageCode}, ${o.device}, ${o.engine}): ${values.before} → ${values.after} on ${o.checkDate}${gap}`,
      });
    };

    for (const rule of RANK_RULES) {
      const value = ruleValue(rules, rule.name);
      if (value === undefined) continue;
      const found = rule.check(o, value);
      if (found) add(rule.name as AlertRuleName, found.threshold, found.what, found.values);
    }
  }
  return out;
}
