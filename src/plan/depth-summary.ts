import { taskUnits } from '../catalog/index.js';
import { autoDepthOf, type AnyJob } from '../jobs/index.js';
import { DEPTH_REASONS, escalationDepth, type DepthReason } from './auto-depth.js';
import type { Plan } from './plan.js';
import type { TaskPrice } from './price.js';

/** Tasks and CNY of one reason of `depth: auto` in a plan (escalations: expected from past nights). */
export interface DepthReasonLine {
  reason: DepthReason;
  tasks: number;
  /** The mean depth bought. */
  depth: number;
  cny: number | null;
}

/**
 * The plan's `depth: auto` tasks by reason, priced per unit of depth from the endpoint's price.
 * Escalations are not known before tonight's results: `escalationRate` (escalations per
 * `auto:seen` task of the pipeline's past runs) gives the expected count, spread over the tasks
 * that can escalate, each at the deepest its tracked domains can call for (max_depth, or
 * competitor_depth when only competitors were seen).
 */
export function depthReasonLines(
  plan: Plan,
  prices: readonly TaskPrice[],
  jobs: readonly AnyJob[],
  escalationRate: number,
): DepthReasonLine[] {
  const auto = plan.tasks.filter((t) => t.depthReason !== undefined);
  if (auto.length === 0) return [];
  const price = new Map(prices.map((p) => [p.endpointId, p.cnyPerTask]));
  // A price per task is at the endpoint's mean units in the plan: per unit, it prices any depth.
  const perUnit = new Map<string, number | null>();
  for (const id of new Set(plan.tasks.map((t) => t.endpoint.id))) {
    const ts = plan.tasks.filter((t) => t.endpoint.id === id);
    const mean = ts.reduce((a, t) => a + taskUnits(t.endpoint.api, t.spec), 0) / ts.length;
    const p = price.get(id);
    perUnit.set(id, p === null || p === undefined ? null : p / mean);
  }
  const lines = new Map<DepthReason, { tasks: number; depthSum: number; cny: number | null }>();
  const add = (reason: DepthReason, n: number, depth: number, cny: number | null) => {
    const l = lines.get(reason) ?? { tasks: 0, depthSum: 0, cny: 0 };
    lines.set(reason, { tasks: l.tasks + n, depthSum: l.depthSum + n * depth, cny: l.cny === null || cny === null ? null : l.cny + cny });
  };
  // The rate is escalations per `auto:seen` task of past nights: tonight's expected count is that
  // share of tonight's, spread over the tasks that can escalate, each at its domains' reach.
  const room: { t: (typeof auto)[number]; deepest: number; unit: number | null }[] = [];
  let seenTasks = 0;
  for (const t of auto) {
    const unit = perUnit.get(t.endpoint.id) ?? null;
    const depth = Number(t.spec.depth);
    add(t.depthReason!, 1, depth, unit === null ? null : unit * taskUnits(t.endpoint.api, t.spec));
    if (t.depthReason !== 'auto:seen') continue;
    seenTasks++;
    // The deepest its escalation can buy: as if every domain seen at the last check were gone tonight.
    const job = jobs.find((j) => j.name === t.job);
    const deepest = job?.kind === 'serp' && t.auto ? escalationDepth(t.auto, autoDepthOf(job), new Set()) : 0;
    if (deepest > 0) room.push({ t, deepest, unit });
  }
  const each = room.length === 0 ? 0 : Math.min(1, (escalationRate * seenTasks) / room.length);
  for (const { t, deepest, unit } of room)
    if (each > 0) add('auto:escalation', each, deepest, unit === null ? null : each * unit * taskUnits(t.endpoint.api, { depth: deepest }));
  return DEPTH_REASONS.filter((r) => lines.has(r)).map((reason) => {
    const l = lines.get(reason)!;
    return { reason, tasks: Math.round(l.tasks), depth: Math.round(l.depthSum / Math.max(1e-9, l.tasks)), cny: l.cny };
  });
}
