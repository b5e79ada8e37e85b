import type { AlertRuleName, AlertRules } from '../config/index.js';
import type { AlertDraft } from './alert.js';
import { ruleValue, RUN_RULES, type RunFacts } from './rules/index.js';

export type { RunFacts } from './rules/index.js';

/**
 * The run rules (src/alerts/rules, in registry order: spend_over_cny, estimate_exceeded,
 * run_not_completed) for one run. Pure.
 */
export function evaluateRunRules(f: RunFacts, rules: AlertRules): AlertDraft[] {
  const out: AlertDraft[] = [];
  const base = { pipeline: f.pipeline, subject: `run ${f.runId}`, runId: f.runId, checkDate: f.runDate };
  for (const rule of RUN_RULES) {
    const value = ruleValue(rules, rule.name);
    if (value === undefined) continue;
    const found = rule.check(f, value);
    if (found) out.push({ ...base, rule: rule.name as AlertRuleName, ...found });
  }
  return out;
}
