import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import type { Plan, PlanSummary, PriceHistory } from '../../plan/index.js';
import type { ReferenceCache } from '../../run/index.js';
import { render } from '../render.js';
import { checkOptions, num } from '../option-checks.js';

interface PlanArgs {
  file: string;
  warehouse: string;
  json: boolean;
  'cny-per-usd'?: number;
}

/** `pipeline plan FILE`: what a run would post and what it should cost; posts nothing. */
export const planCommand: CommandModule<object, PlanArgs> = {
  command: 'plan <file>',
  describe: 'Show what a run would post (tasks, POSTs, calls per rate family, time) and its estimated CNY; posts nothing',
  builder: (y: Argv) =>
    y
      .positional('file', { type: 'string', demandOption: true, describe: 'pipeline YAML' })
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse whose ledger prices past runs' })
      .option('json', { type: 'boolean', default: false, describe: 'print the plan as one JSON object' })
      .option('cny-per-usd', {
        type: 'number',
        describe: "CNY per USD to convert user_data's USD base rates when the ledger has no past charge",
      })
      .check(checkOptions({ 'cny-per-usd': num({ above: 0 }) })) as Argv<PlanArgs>,
  handler: async (args: ArgumentsCamelCase<PlanArgs>) => {
    const { endpoint } = await import('../../catalog/index.js');
    const { ServiceClient } = await import('../../client/index.js');
    const { loadPipeline, resolveCollection } = await import('../../config/index.js');
    const { embeddingJobs } = await import('../../jobs/index.js');
    const {
      depthReasonLines,
      planEmbeddings,
      planPipeline,
      priceTasks,
      pullNightTooLong,
      readDepthHistory,
      readingsInUse,
      readPriceHistory,
      summarizePlan,
    } = await import('../../plan/index.js');
    const { cachedEmbeddingKeys } = await import('../../models/index.js');
    const { readServiceReadings, runQueries, withWarehouse } = await import('../../warehouse/index.js');
    const { preflightJobs } = await import('../../run/index.js');
    const { resolveTarget } = await import('../service-target.js');
    const pipeline = await loadPipeline(args.file);
    // What `pipeline doctor --probe` recorded of the service: one task a POST is planned as a run posts it.
    const readings = readingsInUse(await readServiceReadings(args.warehouse).catch(() => null), new Date());
    const hasWarehouse = existsSync(join(args.warehouse, 'warehouse.duckdb'));
    // `depth: auto` jobs: tonight's depths from the warehouse's checks, and how often past nights escalated.
    const auto = hasWarehouse
      ? await withWarehouse(args.warehouse, async (wh) => ({
          history: await readDepthHistory(wh, pipeline, 'plan', new Date()),
          escalationRate: await runQueries.escalationRate(wh, pipeline.name),
        }))
      : { history: undefined, escalationRate: 0 };
    const plan = planPipeline(pipeline, 'plan', readings.tasksPerPost, auto.history);
    const history: PriceHistory = hasWarehouse
      ? await withWarehouse(args.warehouse, readPriceHistory)
      : { byPipeline: new Map(), byEndpoint: new Map(), cnyPerUsd: null };
    // Keywords the warehouse has embedded already are not bought again, so not priced.
    const cache =
      hasWarehouse && embeddingJobs(pipeline.jobs).length > 0
        ? await withWarehouse(args.warehouse, cachedEmbeddingKeys)
        : new Map<string, Set<string>>();
    const embeddings = planEmbeddings(pipeline, plan.tasks, (model, dims) => cache.get(`${model}\0${dims}`) ?? new Set());
    if (args['cny-per-usd'] !== undefined) history.cnyPerUsd = args['cny-per-usd'];
    const target = await resolveTarget(process.env, { announce: (l) => process.stderr.write(`${l}\n`) });
    let summary: PlanSummary;
    try {
      const sandboxKey = target.apiKey.startsWith('svc_sandbox_');
      // user_data is free: the account's base rates price what the ledger has never seen.
      const client = new ServiceClient({ baseUrl: target.baseUrl, apiKey: target.apiKey, land: async () => {} });
      // What a run would refuse before buying anything (a place, a model or a version the service's
      // free reference lists lack), the plan refuses too, with the same file, line and rule. The
      // warehouse's copies of those lists are read when fresh, as a run reads them.
      const check = (cache?: ReferenceCache) => preflightJobs(client, pipeline, args.file, cache);
      const warnings = hasWarehouse ? await withWarehouse(args.warehouse, (wh) => check({ wh, now: () => new Date() })) : await check();
      for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
      // A run refuses a pull night the rate limits cannot finish before the next one starts (ingest-step.ts).
      const collection = resolveCollection(pipeline.collection);
      const tooLong =
        collection.mode === 'pull' || collection.callback === 'pingback'
          ? pullNightTooLong(plan, { schedule: pipeline.schedule, timezone: pipeline.timezone, now: new Date() })
          : null;
      if (tooLong) process.stderr.write(`warning: a run refuses this plan: ${tooLong.message}\n`);
      const user = (await client.call(endpoint('appendix.user_data'))).envelope.tasks?.[0]?.result?.[0] as
        { rates?: Record<string, unknown> } | undefined;
      const prices = sandboxKey ? sandboxPrices(plan) : priceTasks(plan, history, user?.rates, (id) => highPriority(plan).has(id));
      // Sandbox keys are never charged, embeddings included.
      summary = summarizePlan(plan, prices, sandboxKey ? embeddings.map((e) => ({ ...e, cnyPer1kTokens: 0, cny: 0 })) : embeddings);
      if (readings.notes.length > 0) summary.readings = readings.notes;
      const reasons = depthReasonLines(plan, prices, pipeline.jobs, auto.escalationRate);
      if (reasons.length > 0) summary.depthReasons = reasons;
    } finally {
      await target.sandbox?.close();
    }
    process.stdout.write(args.json ? `${JSON.stringify(summary, null, 2)}\n` : formatPlan(summary, pipeline.budget_cny));
  },
};

/** Endpoints with a priority-2 task (charged extra). */
function highPriority(plan: Plan): Set<string> {
  return new Set(plan.tasks.filter((t) => t.spec.priority === 2).map((t) => t.endpoint.id));
}

/** Sandbox keys are never charged: every endpoint of the plan at 0. */
function sandboxPrices(plan: Plan) {
  return [...new Set(plan.tasks.map((t) => t.endpoint.id))].map((id) => ({
    endpointId: id,
    cnyPerTask: 0,
    source: 'sandbox' as const,
    note: 'sandbox keys are never charged',
  }));
}

function cny(v: number | null): string {
  return v === null ? 'unknown' : v.toFixed(4);
}

export function formatPlan(s: PlanSummary, budget?: number): string {
  const lines = [
    `pipeline ${s.pipeline}: ${s.tasks} tasks in ${s.posts} POST(s)${s.duplicatesDropped ? ` (${s.duplicatesDropped} repeats dropped)` : ''}; nothing was posted`,
    '',
    render(
      s.endpoints.map((e) => ({
        endpoint: e.endpointId,
        tasks: e.tasks,
        posts: e.posts,
        cny_per_task: cny(e.cnyPerTask),
        cny: cny(e.cny),
        price_from: e.priceSource,
        note: e.note ?? '',
      })),
      'table',
    ).trimEnd(),
    '',
    render(
      s.families.map((f) => ({ rate_family: f.family, calls: f.calls, per_minute: f.perMinute, minutes: f.minutes.toFixed(1) })),
      'table',
    ).trimEnd(),
    ...(s.depthReasons
      ? [
          '',
          render(
            s.depthReasons.map((r) => ({ depth_reason: r.reason, tasks: r.tasks, mean_depth: r.depth, cny: cny(r.cny) })),
            'table',
          ).trimEnd(),
          "depth auto: auto:escalation is expected from past nights (escalations per auto:seen task); the others are tonight's depths from the warehouse",
        ]
      : []),
    ...(s.embeddings.length > 0
      ? [
          '',
          render(
            s.embeddings.map((e) => ({
              embeddings: e.job,
              model: `${e.model}/${e.dimensions}`,
              keywords: e.keywords,
              cached: e.cached,
              calls: e.calls,
              tokens_est: e.tokens,
              cny_per_1k: e.cnyPer1kTokens,
              cny: e.cny.toFixed(4),
            })),
            'table',
          ).trimEnd(),
        ]
      : []),
    '',
    ...(s.readings ?? []),
    `at least ${s.minMinutes.toFixed(1)} min at the rate limits (plus the service's own queue time in standard mode)`,
    `estimated charge: ${s.estimatedCny === null ? 'unknown for some endpoints (see price_from)' : `${s.estimatedCny.toFixed(4)} CNY`}${budget !== undefined ? `; budget ${budget} CNY` : ''}`,
  ];
  return `${lines.join('\n')}\n`;
}
