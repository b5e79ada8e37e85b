import type { AlertRules } from '../config/index.js';
import type { AlertDraft } from './alert.js';

/** What the run rules look at: the run's end and its money. */
export interface RunFacts {
  pipeline: string;
  runId: string;
  /** `yyyy-mm-dd`, the UTC day the run started: the alerts' date. */
  runDate: string;
  state: 'completed' | 'partial' | 'failed';
  stopReason: string | null;
  /** What `pipeline plan` priced the run at (CNY); null when it could not be priced. */
  estimateCny: number | null;
  /** What the run was charged, net of refunds (CNY). */
  chargedNetCny: number;
}

const cny = (n: number) => `${n.toFixed(4)} CNY`;

/**
 * spend_over_cny, estimate_exceeded and run_not_completed for one run. Pure. An estimate
 * of 0 or none is not exceeded by anything (there is nothing to compare with).
 */
export function evaluateRunRules(f: RunFacts, rules: AlertRules): AlertDraft[] {
  const out: AlertDraft[] = [];
  const base = { pipeline: f.pipeline, subject: `run ${f.runId}`, runId: f.runId, checkDate: f.runDate };
  if (rules.spend_over_cny !== undefined && f.chargedNetCny > rules.spend_over_cny) {
    out.push({
      ...base,
      rule: 'spend_over_cny',
      before: null,
      after: f.chargedNetCny.toFixed(4),
      threshold: String(rules.spend_over_cny),
      message: `Run ${f.runId} of *${f.pipeline}* charged ${cny(f.chargedNetCny)} (net of refunds), over the ${rules.spend_over_cny} CNY alert line`,
    });
  }
  if (
    rules.estimate_exceeded !== undefined &&
    f.estimateCny !== null &&
    f.estimateCny > 0 &&
    f.chargedNetCny > rules.estimate_exceeded * f.estimateCny
  ) {
    out.push({
      ...base,
      rule: 'estimate_exceeded',
      before: f.estimateCny.toFixed(4),
      after: f.chargedNetCny.toFixed(4),
      threshold: String(rules.estimate_exceeded),
      message: `Run ${f.runId} of *${f.pipeline}* charged ${cny(f.chargedNetCny)}, ${(f.chargedNetCny / f.estimateCny).toFixed(2)}x its estimate of ${cny(f.estimateCny)} (alert above ${rules.estimate_exceeded}x)`,
    });
  }
  if (rules.run_not_completed && f.state !== 'completed') {
    out.push({
      ...base,
      rule: 'run_not_completed',
      before: null,
      after: f.state,
      threshold: 'true',
      message: `Run ${f.runId} of *${f.pipeline}* ended ${f.state}${f.stopReason ? `: ${f.stopReason}` : ''}`,
    });
  }
  return out;
}
