import { autoDepthOf } from '../jobs/index.js';
import { postAll } from '../post/index.js';
import { escalationDepth, packBatches, taskTag, type PlannedTask } from '../plan/index.js';
import { depthReads, runQueries } from '../warehouse/index.js';
import { collectStep } from './collect-step.js';
import type { IngestRun } from './ingest-step.js';
import { killPoint } from './kill-point.js';

/**
 * Same-night escalation of `depth: auto` (src/plan/auto-depth.ts): a series bought at
 * `auto:seen` whose tracked domain, ranked at its last check, is absent within tonight's depth
 * is bought again to that domain's reach (max_depth, or competitor_depth for a competitor:
 * `auto:escalation`), and collected, so a domain that fell is
 * measured. Its tag is a hash of the series and the run with `escalation`: a resumed run finds
 * it by tag and never buys it twice.
 */
export async function escalateStep(r: IngestRun): Promise<void> {
  const { ctx } = r;
  const candidates = await escalationsOf(r);
  if (candidates.length === 0) return;
  const states = await ctx.store.taskStates();
  const todo = candidates.filter((t) => !states.has(t.tag) || states.get(t.tag) === 'unsent');
  if (todo.length === 0) return;
  ctx.note(`depth auto: ${todo.length} series bought again deeper tonight (a tracked domain was not within tonight's depth)`);
  await ctx.store.forgetUnsent(todo.map((t) => t.tag));
  r.stop = await postAll(ctx, packBatches(todo, r.readings.tasksPerPost));
  killPoint('escalate', 'middle');
  const pulled = await collectStep(ctx, {});
  r.stop ??= pulled.stop;
}

/** The escalation tasks tonight's collected `auto:seen` tasks call for (already bought or not). */
async function escalationsOf(r: IngestRun): Promise<PlannedTask[]> {
  const { ctx, plan, o } = r;
  const seen = plan.tasks.filter((t) => t.auto?.reason === 'auto:seen');
  if (seen.length === 0) return [];
  const rows = new Map((await runQueries.autoTasks(ctx.wh, ctx.runId)).map((x) => [x.tag, x]));
  const collected = seen.filter((t) => rows.get(t.tag)?.state === 'collected' && rows.get(t.tag)?.task_id);
  const domains = [...new Set(collected.flatMap((t) => t.auto!.seen.map((x) => x.domain)))];
  const ids = collected.map((t) => rows.get(t.tag)!.task_id!);
  const found = new Map<string, Set<string>>();
  for (const x of await depthReads.taskRanks(ctx.wh, ids, domains)) found.set(x.task_id, (found.get(x.task_id) ?? new Set()).add(x.domain));
  const out: PlannedTask[] = [];
  for (const t of collected) {
    const job = o.pipeline.jobs.find((j) => j.name === t.job);
    if (job?.kind !== 'serp' || job.depth !== 'auto') continue;
    const s = autoDepthOf(job);
    const depth = escalationDepth(t.auto!, s, found.get(rows.get(t.tag)!.task_id!) ?? new Set());
    if (depth === 0) continue;
    const { tag: _tag, ...spec } = t.spec;
    const tag = taskTag(plan.pipeline, ctx.runId, { endpoint: t.endpoint.id, ...spec, depth: 'auto', escalation: true });
    const auto = { ...t.auto!, depth, reason: 'auto:escalation' as const };
    out.push({ tag, job: t.job, endpoint: t.endpoint, spec: { ...spec, depth, tag }, depthReason: 'auto:escalation', auto });
  }
  return out;
}
