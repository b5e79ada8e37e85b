import { endpoint, FAMILIES, taskFunctionOf, type FamilyId } from '../catalog/index.js';
import type { DepthReasonLine } from './depth-summary.js';
import type { EmbeddingsPlan } from './embeddings.js';
import type { Plan } from './plan.js';
import type { TaskPrice } from './price.js';

export interface PlanSummary {
  pipeline: string;
  tasks: number;
  duplicatesDropped: number;
  posts: number;
  endpoints: {
    endpointId: string;
    tasks: number;
    posts: number;
    cnyPerTask: number | null;
    priceSource: string;
    cny: number | null;
    note?: string;
  }[];
  /** Calls the run makes per rate-limit family (at least one ready-list poll per function). */
  families: { family: FamilyId; calls: number; perMinute: number; minutes: number }[];
  /** The least wall time the rate limits allow for these calls (families run side by side). */
  minMinutes: number;
  /** The `/v1/embeddings` calls of `embeddings` jobs (after the run's tasks), priced at the reference rates. */
  embeddings: EmbeddingsPlan[];
  /** Sum of the endpoint and embedding estimates; null when any price is unknown. */
  estimatedCny: number | null;
  /** What the plan took from `pipeline doctor --probe`'s record (readings-use.ts), when one is there. */
  readings?: string[];
  /** `depth: auto` tasks by reason (depth-summary.ts), when the pipeline has such a job. */
  depthReasons?: DepthReasonLine[];
}

/** Counts what a plan will do, and what it should cost, without calling anything. */
export function summarizePlan(plan: Plan, prices: readonly TaskPrice[], embeddings: readonly EmbeddingsPlan[] = []): PlanSummary {
  const price = new Map(prices.map((p) => [p.endpointId, p]));
  const calls = new Map<FamilyId, number>();
  const add = (f: FamilyId, n: number) => calls.set(f, (calls.get(f) ?? 0) + n);
  const endpoints: PlanSummary['endpoints'] = [];
  for (const ep of new Set(plan.tasks.map((t) => t.endpoint))) {
    const tasks = plan.tasks.filter((t) => t.endpoint === ep).length;
    const posts = plan.batches.filter((b) => b.endpoint === ep).length;
    add(ep.family, posts);
    const fn = ep.mode === 'task_post' ? taskFunctionOf(ep) : undefined;
    if (fn) {
      add(fn.get.family, tasks);
      add(fn.ready.family, 1);
    }
    const p = price.get(ep.id);
    const cny = p?.cnyPerTask === null || p?.cnyPerTask === undefined ? null : p.cnyPerTask * tasks;
    endpoints.push({
      endpointId: ep.id,
      tasks,
      posts,
      cnyPerTask: p?.cnyPerTask ?? null,
      priceSource: p?.source ?? 'unknown',
      cny,
      note: p?.note,
    });
  }
  for (const e of embeddings) if (e.calls > 0) add(endpoint('v1.embeddings').family, e.calls);
  const families = [...calls].map(([family, n]) => {
    const perMinute = FAMILIES[family].perMinute;
    return { family, calls: n, perMinute, minutes: n / perMinute };
  });
  return {
    pipeline: plan.pipeline,
    tasks: plan.tasks.length,
    duplicatesDropped: plan.duplicatesDropped,
    posts: plan.batches.length,
    endpoints,
    families,
    minMinutes: Math.max(0, ...families.map((f) => f.minutes)),
    embeddings: [...embeddings],
    estimatedCny: endpoints.some((e) => e.cny === null)
      ? null
      : endpoints.reduce((a, e) => a + (e.cny ?? 0), 0) + embeddings.reduce((a, e) => a + e.cny, 0),
  };
}
