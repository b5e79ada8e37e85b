import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { collectByPull, type PullResult } from '../collect/index.js';
import { ServiceClient, validateTasks, type RateLimiterOptions } from '../client/index.js';
import type { Pipeline } from '../config/index.js';
import { EtlError } from '../errors.js';
import { planPipeline, type Plan, type PlannedBatch } from '../plan/index.js';
import { exportParquet, RawLanding, RunStore, withWarehouse, type Warehouse } from '../warehouse/index.js';
import { summarize, type RunSummary } from './summary.js';

/** What a run reports while it works (the CLI renders it). */
export type ProgressEvent =
  | { kind: 'note'; text: string }
  | { kind: 'collect'; collected: number; failed: number; pending: number };

export interface RunOptions {
  pipeline: Pipeline;
  file: string;
  warehouseDir: string;
  baseUrl: string;
  apiKey: string;
  logger: Logger;
  pollIntervalMs?: number;
  collectTimeoutMs?: number;
  limits?: RateLimiterOptions;
  dispatcher?: Dispatcher;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /** Progress for people; the summary is returned, not printed. */
  onProgress?: (e: ProgressEvent) => void;
}

/** `20261121T230600Z-3f9a1c`: sortable by time, unique per invocation. */
export function newRunId(now: Date): string {
  return `${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

/**
 * Drives one run: plan, record each batch's tasks with their tags, post, record the ids,
 * collect by pull, load, export Parquet. A budget, a 402 or an unknown outcome stops
 * posting cleanly; what was posted is still collected, and the summary says why it stopped.
 */
export async function runPipeline(o: RunOptions): Promise<RunSummary> {
  const now = o.now ?? (() => new Date());
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = now();
  const runId = newRunId(started);
  const plan = planPipeline(o.pipeline, runId);
  // Every task is checked against the catalog before the first call of the run.
  for (const b of plan.batches) validateTasks(b.endpoint, b.tasks.map((t) => t.spec));
  const log = o.logger.child({ runId, pipeline: o.pipeline.name });
  const note = (text: string) => o.onProgress?.({ kind: 'note', text });
  return withWarehouse(o.warehouseDir, async (wh) => {
    const store = new RunStore(wh, runId, o.pipeline.name);
    const landing = new RawLanding(wh, { runId, pipeline: o.pipeline.name });
    const client = new ServiceClient({
      baseUrl: o.baseUrl,
      apiKey: o.apiKey,
      land: landing.land,
      dispatcher: o.dispatcher,
      limits: o.limits,
      now,
      sleep,
    });
    await store.startRun({ file: o.file, baseUrl: o.baseUrl, keyKind: keyKind(o.apiKey), at: started });
    log.info({ tasks: plan.tasks.length, batches: plan.batches.length, duplicatesDropped: plan.duplicatesDropped }, 'planned');
    note(`planned ${plan.tasks.length} tasks in ${plan.batches.length} POST(s)${plan.duplicatesDropped ? ` (${plan.duplicatesDropped} repeats dropped)` : ''}`);
    try {
      let stop = await postAll({ wh, client, store, plan, budget: o.pipeline.budget_cny, now, note });
      if (stop) log.warn({ kind: stop.kind }, stop.reason);
      const pull = await collectSafely(() =>
        collectByPull({
          client,
          wh,
          store,
          postEndpoints: [...new Set(plan.batches.map((b) => b.endpoint))],
          pollIntervalMs: o.pollIntervalMs ?? 30_000,
          timeoutMs: o.collectTimeoutMs ?? 30 * 60_000,
          now,
          sleep,
          onProgress: (p) => o.onProgress?.({ kind: 'collect', ...p }),
        }),
      );
      if (pull.error) {
        log.error({ code: pull.error.code }, pull.error.message);
        stop ??= { kind: 'unknown', reason: `collection stopped: ${pull.error.message}; what was posted stays in state, run again to collect it` };
      } else if (pull.pending > 0) {
        stop ??= { kind: 'unknown', reason: `${pull.pending} task(s) not ready before the collection timeout; run again to collect them` };
      }
      await exportParquet(wh);
      const state = stop === null ? 'completed' : 'partial';
      await store.finishRun(state, stop?.reason ?? null, now());
      log.info({ state, collected: pull.collected, rows: pull.rowsLoaded }, 'run finished');
      return summarize(wh, { runId, pipeline: o.pipeline.name, state, stopReason: stop?.reason ?? null, stopKind: stop?.kind ?? null, started, finished: now(), warehouseDir: wh.dir });
    } catch (err) {
      await store.finishRun('failed', err instanceof Error ? err.message : String(err), now());
      throw err;
    }
  });
}

type Stop = { kind: NonNullable<RunSummary['stopKind']>; reason: string };

/**
 * Posts the plan's batches in order. A budget, a 402 or an unknown outcome stops posting
 * (returned, so what was posted is still collected); a refused key ends the run.
 */
async function postAll(a: {
  wh: Warehouse;
  client: ServiceClient;
  store: RunStore;
  plan: Plan;
  budget: number | undefined;
  now: () => Date;
  note: (text: string) => void;
}): Promise<Stop | null> {
  let posted = 0;
  for (const batch of a.plan.batches) {
    const over = await overBudget(a.wh, a.plan.runId, a.budget, batch, posted);
    if (over) return { kind: 'budget', reason: over };
    try {
      await postBatch(a.client, a.store, batch, a.now);
      posted++;
      a.note(`posted batch ${batch.no}/${a.plan.batches.length} (${batch.tasks.length} tasks)`);
    } catch (err) {
      if (!(err instanceof EtlError) || err.code === 'ETL_AUTH' || err.code === 'ETL_REQUEST_INVALID') throw err;
      const kind = err.code === 'ETL_PAYMENT_REQUIRED' ? 'balance' : err.code === 'ETL_SERVICE_UNAVAILABLE' || err.code === 'ETL_RATE_LIMITED' ? 'unavailable' : 'unknown';
      return { kind, reason: err.message };
    }
  }
  return null;
}

function keyKind(key: string): string {
  return key.startsWith('svc_live_') ? 'live' : key.startsWith('svc_sandbox_') ? 'sandbox' : 'unknown';
}

async function postBatch(client: ServiceClient, store: RunStore, batch: PlannedBatch, now: () => Date): Promise<void> {
  await store.planTasks(
    batch.tasks.map((t) => ({ tag: t.tag, job: t.job, endpointId: t.endpoint.id, batchNo: batch.no, spec: t.spec })),
    now(),
  );
  const call = await client.call(batch.endpoint, { tasks: batch.tasks.map((t) => t.spec) });
  const byTag = new Map(batch.tasks.map((t) => [t.tag, t]));
  const rows = (call.envelope.tasks ?? []).map((task, i) => {
    const echoed = (task.data as { tag?: unknown } | undefined)?.tag;
    const tag = typeof echoed === 'string' && byTag.has(echoed) ? echoed : batch.tasks[i]?.tag;
    const verdict = call.outcome.tasks[i]!;
    return { tag: tag ?? '', taskId: task.id ?? null, ok: verdict.ok, statusCode: verdict.statusCode, message: verdict.message };
  });
  await store.recordPosted(rows.filter((r) => r.tag !== ''), now());
}

/**
 * Stops posting before the next batch would pass the budget. The next batch is priced at
 * the average charge per task seen so far in this run (the first batch is priced by
 * `pipeline plan` in a later release; until then it is always posted).
 */
async function overBudget(wh: Warehouse, runId: string, budget: number | undefined, batch: PlannedBatch, posted: number): Promise<string | null> {
  if (budget === undefined || posted === 0) return null;
  const [row] = await wh.all<{ spent: number; tasks: number }>(
    `SELECT coalesce(sum(charge_cny), 0)::DOUBLE AS spent, coalesce(sum(tasks) FILTER (WHERE charge_cny > 0), 0)::DOUBLE AS tasks
     FROM ledger WHERE run_id = $1`,
    [runId],
  );
  const spent = row?.spent ?? 0;
  const perTask = row && row.tasks > 0 ? spent / row.tasks : 0;
  const next = perTask * batch.tasks.length;
  if (spent + next > budget) {
    return `budget of ${budget} CNY reached: ${spent.toFixed(4)} CNY spent, the next batch would cost about ${next.toFixed(4)} CNY; run again with a higher budget_cny to continue`;
  }
  return null;
}

/** Collection errors end the run as partial (the tasks stay posted in state), never as a crash. */
async function collectSafely(fn: () => Promise<PullResult>): Promise<PullResult & { error?: EtlError }> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof EtlError) || err.code === 'ETL_AUTH') throw err;
    return { collected: 0, failed: 0, rowsLoaded: 0, pending: -1, error: err };
  }
}
