import { entersTop } from './enters-top.js';
import { estimateExceeded } from './estimate-exceeded.js';
import { leavesTop } from './leaves-top.js';
import { lost } from './lost.js';
import { missedNights } from './missed-nights.js';
import { rankDrop } from './rank-drop.js';
import { rankGain } from './rank-gain.js';
import type { AlertRule } from './rule.js';
import { runNotCompleted } from './run-not-completed.js';
import { spendOverCny } from './spend-over-cny.js';
import { urlChanged } from './url-changed.js';

export { place, type RankFinding, type RankObservation, type RankSubject, type RunFacts, type RunFinding } from './rule.js';

/**
 * Every alert rule, in the order of the docs, of the `accepted:` list and of the alerts a run
 * finds. Adding a rule is one module in this folder (its key, its value's schema with the
 * description users read, its check) and one entry here. This folder imports nothing else of
 * src/: the config stage reads the rules' schemas from here (.dependency-cruiser.cjs).
 */
export const ALERT_RULES = [
  entersTop,
  leavesTop,
  rankDrop,
  rankGain,
  lost,
  urlChanged,
  spendOverCny,
  estimateExceeded,
  runNotCompleted,
  missedNights,
] as const;

type Rules = (typeof ALERT_RULES)[number];

/** Each rule's key in the pipeline file with the schema of its value: the single source of the rule names. */
export const ALERT_RULE_SHAPE = Object.fromEntries(ALERT_RULES.map((r) => [r.name, r.option])) as {
  [R in Rules as R['name']]: R['option'];
};

/** The rules by what they look at, in registry order. */
export const RANK_RULES = ALERT_RULES.filter((r) => r.scope === 'rank') as unknown as readonly Extract<AlertRule, { scope: 'rank' }>[];
export const RUN_RULES = ALERT_RULES.filter((r) => r.scope === 'run') as unknown as readonly Extract<AlertRule, { scope: 'run' }>[];

/** The value a rule is set to in resolved rules, or undefined when it is off (absent or `false`). */
export function ruleValue(rules: Partial<Record<string, unknown>>, name: string): unknown {
  const v = rules[name];
  return v === undefined || v === false ? undefined : v;
}
