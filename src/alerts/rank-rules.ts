import type { AlertRules } from '../config/index.js';
import type { AlertDraft } from './alert.js';
import type { RankObservation } from './rank-observations.js';

export interface RankRuleContext {
  pipeline: string;
  runId: string | null;
  /** Days between two scheduled checks (1 for a nightly or unscheduled pipeline): a longer gap is marked. */
  intervalDays: number;
}

/** true / false when the checks say so; undefined when they did not look deep enough to tell. */
type Known = boolean | undefined;

/** Whether the domain ranked within the top `n` at a check that looked `depth` deep. */
function within(rank: number | null, depth: number | null, n: number): Known {
  if (rank !== null) return rank <= n;
  return depth !== null && depth >= n ? false : undefined;
}

function place(rank: number | null, depth: number | null): string {
  if (rank !== null) return `#${rank}`;
  return depth !== null ? `beyond ${depth}` : 'not ranked';
}

/**
 * The rank rules over the tracked domains of a run's checks. Pure, so every rule is
 * unit-tested without a warehouse. No false alarms: nothing is said about a series' first
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

    if (rules.enters_top !== undefined) {
      const n = rules.enters_top;
      if (within(o.rank, o.depth, n) === true && within(o.previousRank, o.previousDepth, n) === false)
        add('enters_top', String(n), `entered the top ${n}`);
    }
    if (rules.leaves_top !== undefined) {
      const n = rules.leaves_top;
      if (within(o.previousRank, o.previousDepth, n) === true && within(o.rank, o.depth, n) === false)
        add('leaves_top', String(n), `left the top ${n}`);
    }
    if (rules.rank_drop !== undefined && o.previousRank !== null) {
      // Absent now: it fell at least to just past the depth this check looked.
      const least = o.rank ?? (o.depth !== null ? o.depth + 1 : null);
      if (least !== null && least - o.previousRank >= rules.rank_drop)
        add(
          'rank_drop',
          String(rules.rank_drop),
          `dropped ${o.rank !== null ? least - o.previousRank : `${least - o.previousRank}+`} places`,
        );
    }
    if (rules.rank_gain !== undefined && o.rank !== null) {
      const from = o.previousRank ?? (o.previousDepth !== null ? o.previousDepth + 1 : null);
      if (from !== null && from - o.rank >= rules.rank_gain)
        add('rank_gain', String(rules.rank_gain), `rose ${o.previousRank !== null ? from - o.rank : `${from - o.rank}+`} places`);
    }
    if (rules.lost && o.rank === null && o.previousRank !== null && o.depth !== null && o.previousRank <= o.depth) {
      add('lost', 'true', 'is no longer ranked');
    }
    if (
      rules.url_changed &&
      o.rank !== null &&
      o.previousRank !== null &&
      o.url !== null &&
      o.previousUrl !== null &&
      !sameUrl(o.url, o.previousUrl)
    ) {
      add('url_changed', 'true', 'ranks with another URL', { before: o.previousUrl, after: o.url });
    }
  }
  return out;
}

/** URLs compared without a trailing slash, a leading `www.` or the host's case: those are not a new page. */
function sameUrl(a: string, b: string): boolean {
  const norm = (u: string) =>
    u
      .trim()
      .replace(/^(https?:\/\/)(www\.)?([^/?#]*)/i, (_m, scheme: string, _w, host: string) => `${scheme.toLowerCase()}${host.toLowerCase()}`)
      .replace(/\/+$/, '');
  return norm(a) === norm(b);
}
