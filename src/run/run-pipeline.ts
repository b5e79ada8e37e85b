import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { collectByPull, loadLandedLeftovers, PushCollector, TaskLoader } from '../collect/index.js';
import { endpoint } from '../catalog/index.js';
import { ServiceClient, validateTasks, type RateLimiterOptions, type RawResponse } from '../client/index.js';
import { resolveCollection, type CollectionOverrides, type Pipeline, type ResolvedCollection } from '../config/index.js';
import { EtlError } from '../errors.js';
import { packBatches, planPipeline, readPriceHistory, type PlannedBatch, type PlannedTask, type PriceHistory } from '../plan/index.js';
import { compactRaw, exportParquet, RawLanding, RunStore, withWarehouse, type Warehouse } from '../warehouse/index.js';
import { fromMicros, toMicros } from './money.js';
import { resolveUnknown } from './resolve-unknown.js';
import { forgetUnsent, listUnfinishedRuns, markSuperseded, markTasks, openTasks, reopenRun, taskStates, waitingEndpointIds } from './run-state.js';
import { summarize, type RunSummary } from './summary.js';

/** What a run reports while it works (the CLI renders it). */
export type ProgressEvent =
  | { kind: 'note'; text: string }
  | { kind: 'collect'; collected: number; failed: number; pending: number; chargedCny: string };

export interface RunOptions {
  pipeline: Pipeline;
  file: string;
  warehouseDir: string;
  baseUrl: string;
  apiKey: string;
  logger: Logger;
  /** Start a new run even when the last run of this pipeline is unfinished. */
  newRun?: boolean;
  pollIntervalMs?: number;
  /** Overrides the pipeline's `collection.deadline_minutes`. */
  collectTimeoutMs?: number;
  /** Overrides of the pipeline's `collection` block (mode, listen address, public URL). */
  collection?: Omit<CollectionOverrides, 'deadlineMs'>;
  /** Secret of this process's callback URLs; random by default (tests fix it to reach the server). */
  callbackSecret?: string;
  limits?: RateLimiterOptions;
  dispatcher?: Dispatcher;
  /** Aborting stops posting and collecting; calls in flight finish and state is saved. */
  signal?: AbortSignal;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /** Progress for people; the summary is returned, not printed. */
  onProgress?: (e: ProgressEvent) => void;
}

/** `20261121T230600Z-3f9a1c`: sortable by time, unique per invocation. */
export function newRunId(now: Date): string {
  return `${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

/** Tables every run writes (state, ledger, raw index). */
const STATE_TABLES = ['runs', 'tasks', 'ledger', 'raw_responses'];

type Stop = { kind: NonNullable<RunSummary['stopKind']>; reason: string };

interface Ctx {
  o: RunOptions;
  wh: Warehouse;
  client: ServiceClient;
  store: RunStore;
  runId: string;
  log: Logger;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  note: (text: string) => void;
  /** Past prices from the ledger, read once when the budget first needs them. */
  priceHistory?: PriceHistory;
  /** CNY charged to this invocation so far (exact, in micro-CNY), for progress lines. */
  charged: { micros: bigint };
  collection: ResolvedCollection;
  /** The callback server and its loader, while this process posts with callbacks. */
  push?: PushCollector;
}

/**
 * Drives one run: plan, record each batch's tasks with their tags, post, record the ids,
 * collect by pull, load, export Parquet. The latest unfinished run of the same pipeline is
 * resumed under its own id (so its tags match): what it posted is collected first, tasks
 * of unknown outcome are looked up by tag, then only what never reached the service is
 * posted. Older unfinished runs (all of them with `newRun`) are settled first: their paid
 * tasks collected and looked up, nothing posted. A budget, a 402, an unknown outcome or an
 * abort stops posting cleanly, and the summary says why.
 */
export async function runPipeline(o: RunOptions): Promise<RunSummary> {
  const now = o.now ?? (() => new Date());
  const sleep = o.sleep ?? abortableSleep(o.signal);
  const charged = { micros: 0n };
  return withWarehouse(o.warehouseDir, async (wh) => {
    const started = now();
    const unfinished = await listUnfinishedRuns(wh, o.pipeline.name);
    const resume = o.newRun ? undefined : unfinished.at(-1);
    const runId = resume?.runId ?? newRunId(started);
    const plan = planPipeline(o.pipeline, runId);
    const collection = resolveCollection(o.pipeline.collection, { ...o.collection, ...(o.collectTimeoutMs !== undefined ? { deadlineMs: o.collectTimeoutMs } : {}) });
    // Every task is checked against the catalog before the first call of the run.
    for (const b of plan.batches) validateTasks(b.endpoint, b.tasks.map((t) => t.spec));
    const make = (id: string): Ctx => {
      const landing = new RawLanding(wh, { runId: id, pipeline: o.pipeline.name });
      // The charge headers seen by this invocation, summed exactly, for progress lines.
      const land = async (raw: RawResponse) => {
        await landing.land(raw);
        charged.micros += toMicros(raw.charge.chargeCny);
      };
      return {
        o,
        wh,
        runId: id,
        store: new RunStore(wh, id, o.pipeline.name),
        client: new ServiceClient({ baseUrl: o.baseUrl, apiKey: o.apiKey, land, dispatcher: o.dispatcher, limits: o.limits, now, sleep }),
        log: o.logger.child({ runId: id, pipeline: o.pipeline.name }),
        now,
        sleep,
        note: (text: string) => o.onProgress?.({ kind: 'note', text }),
        charged,
        collection,
      };
    };
    for (const old of unfinished) if (old !== resume) await settle(make(old.runId), runId);

    const ctx = make(runId);
    const { store, log, note } = ctx;
    if (resume) {
      await reopenRun(wh, runId);
      note(`resuming unfinished run ${runId} (started ${resume.startedAt.toISOString()}): collecting what it posted first`);
    } else {
      await store.startRun({ file: o.file, baseUrl: o.baseUrl, keyKind: ctx.client.keyKind, at: started });
    }
    try {
      let stop: Stop | null = null;
      const touched = new Set<string>();
      if (resume) {
        const first = await collect(ctx, { sweep: true });
        stop = first.stop;
        for (const t of first.tables) touched.add(t);
        const settled = await resolveUnknown({ wh, client: ctx.client, store, runId, now });
        if (settled.found + settled.notCreated > 0) {
          note(`tasks of unknown outcome: ${settled.found} found by tag (collected, not bought again), ${settled.notCreated} never created (posted now)`);
        }
        if (settled.error) log.warn(settled.error);
      }
      const states = await taskStates(wh, runId);
      const toPost = plan.tasks.filter((t) => !states.has(t.tag) || states.get(t.tag) === 'unsent');
      log.info({ tasks: plan.tasks.length, toPost: toPost.length, duplicatesDropped: plan.duplicatesDropped }, 'planned');
      const batches = packBatches(toPost);
      note(`planned ${plan.tasks.length} tasks${plan.duplicatesDropped ? ` (${plan.duplicatesDropped} repeats dropped)` : ''}; ${toPost.length} to post in ${batches.length} POST(s)`);
      if (!stop) {
        await forgetUnsent(wh, runId, toPost.map((t) => t.tag));
        if (collection.mode === 'push' && batches.length > 0) {
          ctx.push = await PushCollector.start({ ...collection, wh, runId, pipeline: o.pipeline.name, now, secret: o.callbackSecret });
          note(`push collection: callbacks to ${ctx.push.baseUrl} (${collection.callback}); what does not arrive is recovered or pulled`);
        }
        stop = await postAll(ctx, batches);
      }
      // Always collect, whatever stopped the posting: what was posted is paid for.
      const pulled = await collect(ctx, {});
      stop ??= pulled.stop;
      for (const t of pulled.tables) touched.add(t);
      const unresolved = (await openTasks(wh, runId)).length;
      if (!stop && unresolved > 0) {
        stop = {
          kind: 'unknown',
          reason: `${unresolved} task(s) were sent but their POST outcome is unknown; they are not re-posted, so nothing is paid twice. They stay in the tasks table with their tags; the next run looks them up.`,
        };
      }
      // One segment file per day, kind and run instead of one file per response: loads and
      // replays read a handful of files, and every body stays reachable through the index.
      await compactRaw(wh);
      // Only the tables this run wrote get a new Parquet copy (`pipeline export` rewrites all).
      await exportParquet(wh, { tables: [...STATE_TABLES, ...touched] });
      const state = stop === null ? 'completed' : 'partial';
      await store.finishRun(state, stop?.reason ?? null, now());
      log.info({ state, stop: stop?.kind }, 'run finished');
      const summary = await summarize(wh, { runId, pipeline: o.pipeline.name, state, stopReason: stop?.reason ?? null, stopKind: stop?.kind ?? null, started, finished: now(), warehouseDir: wh.dir });
      return { ...summary, resumed: resume !== undefined };
    } catch (err) {
      await store.finishRun('failed', err instanceof Error ? err.message : String(err), now());
      throw err;
    } finally {
      await ctx.push?.close();
    }
  });
}

/**
 * Settles an older unfinished run without posting: collects what it posted (a direct sweep
 * finds tasks fetched but never loaded), looks its tasks of unknown outcome up by tag, and
 * marks it superseded once nothing of it is left open.
 */
async function settle(c: Ctx, by: string): Promise<void> {
  c.note(`settling earlier unfinished run ${c.runId}: collecting what it posted`);
  await collect(c, { sweep: true, timeoutMs: 0 });
  const r = await resolveUnknown({ wh: c.wh, client: c.client, store: c.store, runId: c.runId, now: c.now });
  if (r.error) c.log.warn(r.error);
  const waiting = await waitingEndpointIds(c.wh, c.runId);
  const open = await openTasks(c.wh, c.runId);
  const unsent = [...(await taskStates(c.wh, c.runId)).values()].filter((s) => s === 'unsent').length;
  if (waiting.length === 0 && open.length === 0) {
    await markSuperseded(c.wh, c.runId, by, c.now());
    if (unsent) c.note(`run ${c.runId}: ${unsent} task(s) it never sent are left to the new run's plan`);
  } else {
    c.note(`run ${c.runId} still has tasks waiting or of unknown outcome; a later run settles it again`);
  }
}

/** A sleep that ends early when the run is aborted, so Ctrl-C never waits out a poll. */
function abortableSleep(signal: AbortSignal | undefined): (ms: number) => Promise<void> {
  return (ms) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
}

/**
 * Collects what the run posted: first what is already landed but not loaded (costs no
 * call), then, when this process posted with callbacks, the push wait, then pull for the
 * rest. Collection errors end the run as partial (the tasks stay posted in state), never
 * as a crash.
 */
async function collect(c: Ctx, opts: { sweep?: boolean; timeoutMs?: number }): Promise<{ tables: Set<string>; stop: Stop | null }> {
  const tables = new Set<string>();
  // The functions to poll come from state, so tasks of a job since removed from the file are still collected.
  const postEndpoints = (await waitingEndpointIds(c.wh, c.runId)).flatMap((id) => {
    try {
      return [endpoint(id)];
    } catch {
      c.log.error({ endpointId: id }, 'tasks of an endpoint the catalog no longer knows cannot be collected');
      return [];
    }
  });
  if (postEndpoints.length === 0) return { tables, stop: null };
  const started = c.now().getTime();
  const timeoutMs = opts.timeoutMs ?? c.collection.deadlineMs;
  const pollIntervalMs = c.o.pollIntervalMs ?? 30_000;
  const onProgress = (p: { collected: number; failed: number; pending: number }) => c.o.onProgress?.({ kind: 'collect', ...p, chargedCny: fromMicros(c.charged.micros) });
  try {
    let sweep = opts.sweep;
    if (sweep) {
      const left = await loadLandedLeftovers(c.wh, c.runId, c.now());
      for (const t of left.tables) tables.add(t);
      if (left.collected > 0) c.note(`${left.collected} task(s) already landed (callbacks or fetches before a stop) loaded without calling the service`);
      if (left.error) c.log.warn(left.error);
    }
    if (c.push && !sweep) {
      const pushed = await c.push.collect({ client: c.client, deadlineAt: started + timeoutMs, checkEveryMs: pollIntervalMs, signal: c.o.signal, onProgress });
      await c.push.close();
      for (const t of pushed.tables) tables.add(t);
      const refused = Object.entries(pushed.refused).map(([code, n]) => `${n}x${code}`).join(', ');
      c.note(`push: ${pushed.landed} postback(s) and ${pushed.pinged} pingback(s) taken, ${pushed.resent} resent, ${pushed.fetched} fetched${refused ? `, refused ${refused}` : ''}; ${pushed.pending} left (${pushed.ended})`);
      if (pushed.ended === 'deadline' || pushed.ended === 'interrupted') return { tables, stop: await leftStop(c, 0) };
      // Callbacks that stopped coming, or bodies that would not load, are fetched directly.
      sweep = pushed.ended === 'stalled' || pushed.ended === 'load_failed';
    }
    // Fetched tasks load on a second connection while the next ones are fetched.
    const sibling = await c.wh.sibling();
    try {
      const pull = await collectByPull({
        client: c.client,
        wh: c.wh,
        store: c.store,
        postEndpoints,
        sweep,
        pollIntervalMs,
        timeoutMs: Math.max(0, timeoutMs - (c.now().getTime() - started)),
        signal: c.o.signal,
        now: c.now,
        sleep: c.sleep,
        onProgress,
        loader: new TaskLoader(sibling, c.runId, c.now),
      });
      for (const t of pull.tables) tables.add(t);
      return { tables, stop: await leftStop(c, pull.pending) };
    } finally {
      sibling.close();
    }
  } catch (err) {
    if (!(err instanceof EtlError) || err.code === 'ETL_AUTH') throw err;
    c.log.error({ code: err.code }, err.message);
    return { tables, stop: { kind: 'unavailable', reason: `collection stopped: ${err.message}; what was posted stays in state, run again to collect it` } };
  }
}

/** Why collection ended with tasks still out (`pending` from pull, or read from state). */
async function leftStop(c: Ctx, pending: number): Promise<Stop | null> {
  const left = pending > 0 ? pending : (await c.store.pendingTaskIds()).length;
  if (left === 0) return null;
  if (c.o.signal?.aborted) return { kind: 'interrupted', reason: `interrupted with ${left} task(s) still to collect; run again to resume` };
  return { kind: 'unknown', reason: `${left} task(s) not ready before the collection timeout; run again to collect them` };
}

/**
 * Posts batches in order. A budget, a 402, an abort or a POST with no answer stops posting
 * (returned, so what was posted is still collected); a refused key ends the run.
 */
async function postAll(c: Ctx, batches: readonly PlannedBatch[]): Promise<Stop | null> {
  for (const batch of batches) {
    if (c.o.signal?.aborted) return { kind: 'interrupted', reason: `interrupted before batch ${batch.no} of ${batches.length}; run again to resume` };
    const over = await overBudget(c, batch);
    if (over) return { kind: 'budget', reason: over };
    try {
      await postBatch(c, batch);
      c.note(`posted batch ${batch.no}/${batches.length} (${batch.tasks.length} tasks)`);
    } catch (err) {
      if (!(err instanceof EtlError)) throw err;
      // A refusal (no connection, 401, 402, repeated 429) created nothing; anything else may have.
      const refused = ['ETL_SERVICE_UNAVAILABLE', 'ETL_RATE_LIMITED', 'ETL_PAYMENT_REQUIRED', 'ETL_AUTH'].includes(err.code);
      await markTasks(c.wh, c.runId, batch.tasks.map((t) => t.tag), refused ? 'unsent' : 'unknown', err.message);
      if (err.code === 'ETL_AUTH' || err.code === 'ETL_REQUEST_INVALID') throw err;
      const kind = err.code === 'ETL_PAYMENT_REQUIRED' ? 'balance' : refused ? 'unavailable' : 'unknown';
      return { kind, reason: err.message };
    }
  }
  return null;
}

async function postBatch(c: Ctx, batch: PlannedBatch): Promise<void> {
  await c.store.planTasks(
    batch.tasks.map((t) => ({ tag: t.tag, job: t.job, endpointId: t.endpoint.id, batchNo: batch.no, spec: t.spec })),
    c.now(),
  );
  // Callback URLs are added here, not planned: they hold this process's secret, and the tag must not.
  const callbacks = c.push?.callbackFields(batch.endpoint) ?? {};
  const tags = batch.tasks.map((t) => t.tag);
  c.push?.sending(batch.endpoint, tags);
  let call;
  try {
    call = await c.client.call(batch.endpoint, { tasks: batch.tasks.map((t) => ({ ...t.spec, ...callbacks })) });
  } catch (err) {
    c.push?.abandoned(tags);
    throw err;
  }
  const byTag = new Map<string, PlannedTask>(batch.tasks.map((t) => [t.tag, t]));
  const rows = (call.envelope.tasks ?? []).map((task, i) => {
    const echoed = (task.data as { tag?: unknown } | undefined)?.tag;
    const tag = typeof echoed === 'string' && byTag.has(echoed) ? echoed : batch.tasks[i]?.tag;
    const verdict = call.outcome.tasks[i]!;
    return { tag: tag ?? '', taskId: task.id ?? null, ok: verdict.ok, statusCode: verdict.statusCode, message: verdict.message };
  });
  c.push?.answered(tags, rows);
  await c.store.recordPosted(rows.filter((r) => r.tag !== ''), c.now());
  c.push?.recorded(rows.map((r) => r.taskId));
}

/**
 * Stops posting before the next batch would pass the budget. The next batch is priced at
 * the average charge per task seen so far in this run, or before the first POST at what
 * the ledger says earlier runs paid; a task never bought before is not priced (0), so a
 * first run of a new pipeline can pass the budget by at most one batch.
 */
async function overBudget(c: Ctx, batch: PlannedBatch): Promise<string | null> {
  const budget = c.o.pipeline.budget_cny;
  if (budget === undefined) return null;
  const { wh, runId } = c;
  const [row] = await wh.all<{ spent: number; tasks: number }>(
    `SELECT coalesce(sum(charge_cny), 0)::DOUBLE AS spent, coalesce(sum(tasks) FILTER (WHERE charge_cny > 0), 0)::DOUBLE AS tasks
     FROM ledger WHERE run_id = $1`,
    [runId],
  );
  const spent = row?.spent ?? 0;
  // This run's own average once it has one; before its first POST, what the ledger says
  // earlier runs paid per task of this endpoint (the price `pipeline plan` shows).
  const history = (c.priceHistory ??= await readPriceHistory(wh));
  const known = history.byPipeline.get(`${c.o.pipeline.name}\0${batch.endpoint.id}`) ?? history.byEndpoint.get(batch.endpoint.id);
  const perTask = row && row.tasks > 0 ? spent / row.tasks : (known ?? 0);
  const next = perTask * batch.tasks.length;
  if (spent + next > budget) {
    return `budget of ${budget} CNY reached: ${spent.toFixed(4)} CNY spent, the next batch would cost about ${next.toFixed(4)} CNY; raise budget_cny and run again to continue`;
  }
  return null;
}
