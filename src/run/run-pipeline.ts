import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { collectByPull, collectOnPage, loadLandedLeftovers, PushCollector, TaskLoader } from '../collect/index.js';
import { endpoint } from '../catalog/index.js';
import { ServiceClient, validateTasks, type RateLimiterOptions, type RawResponse } from '../client/index.js';
import { resolveCollection, type CollectionOverrides, type Pipeline, type ResolvedCollection } from '../config/index.js';
import { EtlError } from '../errors.js';
import { packBatches, planPipeline, readPriceHistory, type PlannedBatch, type PriceHistory } from '../plan/index.js';
import { compactRaw, exportParquet, RawLanding, recordTrackedDomains, RunStore, withWarehouse, type Warehouse } from '../warehouse/index.js';
import { fromMicros, toMicros } from './money.js';
import { checkLlmModels } from './check-models.js';
import { embedJobs } from './embed-jobs.js';
import { LIVE_CONCURRENCY, loadLiveTasks, postedRows, settleLive } from './live.js';
import { collectProgress, postingProgress, type RunProgress } from './progress.js';
import { resolveUnknown } from './resolve-unknown.js';
import { forgetUnsent, listUnfinishedRuns, markSuperseded, markTasks, openTasks, reopenRun, taskStates, waitingEndpointIds } from './run-state.js';
import { summarize, type RunSummary } from './summary.js';

/** What a run reports while it works (the CLI renders it); `collect` events come while posting too. */
export type ProgressEvent = { kind: 'note'; text: string } | ({ kind: 'collect' } & RunProgress);

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

/** Crawl tasks, collected by watching the crawl rather than a ready list. */
const ON_PAGE_POST = 'on_page.task_post';

/** Tables every run writes (state, jobs, ledger, raw index, tracked domains). */
const STATE_TABLES = ['runs', 'tasks', 'run_jobs', 'ledger', 'raw_responses', 'tracked_domains'];

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
    const indexOn = await wh.sibling();
    try {
      return await runIn(o, wh, indexOn, now, sleep, charged);
    } finally {
      // Rows still deferred: committed now (the next run's reindex would rebuild them otherwise).
      await wh.flushIndex().catch((err: unknown) => o.logger.warn({ err: (err as Error).message }, 'deferred raw index rows not committed; the next run rebuilds them from the raw files'));
      indexOn.close();
    }
  });
}

/** Parquet copies of `tables` made on a connection of their own. */
async function exportBeside(wh: Warehouse, tables: readonly string[]): Promise<void> {
  const side = await wh.sibling();
  try {
    await exportParquet(side, { tables });
  } finally {
    side.close();
  }
}

/** A run on an open warehouse; `indexOn` is the landing's own connection. */
async function runIn(o: RunOptions, wh: Warehouse, indexOn: Warehouse, now: () => Date, sleep: (ms: number) => Promise<void>, charged: { micros: bigint }): Promise<RunSummary> {
  const started = now();
  const unfinished = await listUnfinishedRuns(wh, o.pipeline.name);
  const resume = o.newRun ? undefined : unfinished.at(-1);
  const runId = resume?.runId ?? newRunId(started);
  const plan = planPipeline(o.pipeline, runId);
  const collection = resolveCollection(o.pipeline.collection, { ...o.collection, ...(o.collectTimeoutMs !== undefined ? { deadlineMs: o.collectTimeoutMs } : {}) });
  // Every task is checked against the catalog before the first call of the run.
  for (const b of plan.batches) validateTasks(b.endpoint, b.tasks.map((t) => t.spec));
  const make = (id: string): Ctx => {
    // Free reads (task_get, tasks_ready) are indexed in batches: a commit per read cost
    // more CPU than the read's rows (bench/engine.ts). Whatever reads the index flushes first.
    const landing = new RawLanding(wh, { runId: id, pipeline: o.pipeline.name }, { deferFreeReads: true, indexOn });
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
  if (!resume) {
    // A model the service does not offer would be refused with 40501 after the others were paid for.
    const warning = await checkLlmModels(ctx.client, o.pipeline, o.file);
    if (warning) log.warn(warning);
  }
  if (resume) {
    await reopenRun(wh, runId);
    note(`resuming unfinished run ${runId} (started ${resume.startedAt.toISOString()}): collecting what it posted first`);
  } else {
    await store.startRun({ file: o.file, baseUrl: o.baseUrl, keyKind: ctx.client.keyKind, at: started });
  }
  await store.recordJobs(o.pipeline.jobs);
  try {
    await recordTrackedDomains(wh, o.pipeline, runId, started);
    let stop: Stop | null = null;
    const touched = new Set<string>();
    if (resume) {
      const first = await collect(ctx, { sweep: true });
      stop = first.stop;
      for (const t of first.tables) touched.add(t);
      const settled = await resolveUnknown({ wh, client: ctx.client, store, runId, now, sleep: o.sleep });
      if (settled.found + settled.notCreated > 0) {
        note(`tasks of unknown outcome: ${settled.found} found by tag (collected, not bought again), ${settled.notCreated} never created (posted now)`);
      }
      if (settled.error) log.warn(settled.error);
      await settleLiveTasks(ctx, touched);
    }
    const states = await taskStates(wh, runId);
    const toPost = plan.tasks.filter((t) => !states.has(t.tag) || states.get(t.tag) === 'unsent');
    log.info({ tasks: plan.tasks.length, toPost: toPost.length, duplicatesDropped: plan.duplicatesDropped }, 'planned');
    const batches = packBatches(toPost);
    note(`planned ${plan.tasks.length} tasks${plan.duplicatesDropped ? ` (${plan.duplicatesDropped} repeats dropped)` : ''}; ${toPost.length} to post in ${batches.length} POST(s)`);
    if (!stop) {
      await forgetUnsent(wh, runId, toPost.map((t) => t.tag));
      if (collection.mode === 'push' && batches.some((b) => b.endpoint.mode === 'task_post')) {
        const onIgnored = (taskId: string, ignored: readonly string[]) => log.warn({ taskId, ignored }, 'a postback body held other tasks: only the task its URL names was landed, the others were dropped');
        ctx.push = await PushCollector.start({ ...collection, wh, runId, pipeline: o.pipeline.name, now, secret: o.callbackSecret, onIgnored });
        note(`push collection: callbacks to ${ctx.push.baseUrl} (${collection.callback}); what does not arrive is recovered or pulled`);
      }
      stop = await postAll(ctx, batches, touched);
    }
    // Always collect, whatever stopped the posting: what was posted is paid for.
    const pulled = await collect(ctx, {});
    stop ??= pulled.stop;
    for (const t of pulled.tables) touched.add(t);
    // Embeddings of the pipeline's keywords come last: they need no task, only the keywords.
    if (!stop) {
      const embedded = await embedJobs(ctx, plan.tasks);
      if (embedded) touched.add('keyword_embeddings');
    }
    const unresolved = (await openTasks(wh, runId)).length;
    if (!stop && unresolved > 0) {
      stop = {
        kind: 'unknown',
        reason: `${unresolved} task(s) were sent but their POST outcome is unknown; they are not re-posted, so nothing is paid twice. They stay in the tasks table with their tags; the next run looks them up.`,
      };
    }
    // One segment file per day, kind and run instead of one file per response: loads and
    // replays read a handful of files, and every body stays reachable through the index.
    // Only the tables this run wrote get a new Parquet copy (`pipeline export` rewrites
    // all); all but the raw index are copied on a second connection while compaction runs.
    const tables = [...STATE_TABLES, ...touched];
    const copies = exportBeside(wh, tables.filter((t) => t !== 'raw_responses'));
    try {
      await compactRaw(wh);
    } finally {
      await copies;
    }
    await exportParquet(wh, { tables: ['raw_responses'] });
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
}

/**
 * Settles an older unfinished run without posting: collects what it posted (a direct sweep
 * finds tasks fetched but never loaded), looks its tasks of unknown outcome up by tag, and
 * marks it superseded once nothing of it is left open.
 */
async function settle(c: Ctx, by: string): Promise<void> {
  c.note(`settling earlier unfinished run ${c.runId}: collecting what it posted`);
  await collect(c, { sweep: true, timeoutMs: 0 });
  const r = await resolveUnknown({ wh: c.wh, client: c.client, store: c.store, runId: c.runId, now: c.now, sleep: c.o.sleep });
  if (r.error) c.log.warn(r.error);
  await settleLiveTasks(c, new Set());
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
      const e = endpoint(id);
      // Live answers are loaded from the landing as they come (settleLiveTasks); nothing to poll.
      return e.mode === 'live' ? [] : [e];
    } catch {
      c.log.error({ endpointId: id }, 'tasks of an endpoint the catalog no longer knows cannot be collected');
      return [];
    }
  });
  if (postEndpoints.length === 0) return { tables, stop: null };
  // On-page crawls have no ready list: they are watched and read by their own collector.
  const pullEndpoints = postEndpoints.filter((e) => e.id !== ON_PAGE_POST);
  const crawls = pullEndpoints.length < postEndpoints.length;
  const started = c.now().getTime();
  const timeoutMs = opts.timeoutMs ?? c.collection.deadlineMs;
  const pollIntervalMs = c.o.pollIntervalMs ?? 30_000;
  const onProgress = (p: Parameters<typeof collectProgress>[0]) => c.o.onProgress?.({ kind: 'collect', ...collectProgress(p, c.client.limiter, fromMicros(c.charged.micros)) });
  const pushProgress = (p: { collected: number; failed: number; pending: number }) =>
    onProgress({ ...p, posted: p.collected + p.failed + p.pending, ready: 0, refetched: 0, callsLeft: [] });
  try {
    let sweep = opts.sweep;
    if (sweep) {
      const left = await loadLandedLeftovers(c.wh, c.runId, c.now());
      for (const t of left.tables) tables.add(t);
      if (left.collected > 0) c.note(`${left.collected} task(s) already landed (callbacks or fetches before a stop) loaded without calling the service`);
      if (left.error) c.log.warn(left.error);
    }
    if (c.push && !sweep) {
      const pushed = await c.push.collect({ client: c.client, deadlineAt: started + timeoutMs, checkEveryMs: pollIntervalMs, signal: c.o.signal, onProgress: pushProgress });
      await c.push.close();
      for (const t of pushed.tables) tables.add(t);
      const refused = Object.entries(pushed.refused).map(([code, n]) => `${n}x${code}`).join(', ');
      c.note(`push: ${pushed.landed} postback(s) and ${pushed.pinged} pingback(s) taken, ${pushed.resent} resent, ${pushed.fetched} fetched${refused ? `, refused ${refused}` : ''}; ${pushed.pending} left (${pushed.ended})`);
      if (pushed.ended === 'deadline' || pushed.ended === 'interrupted') return { tables, stop: await leftStop(c, 0) };
      // Callbacks that stopped coming, or bodies that would not load, are fetched directly.
      sweep = pushed.ended === 'stalled' || pushed.ended === 'load_failed';
    }
    let pending = 0;
    if (pullEndpoints.length > 0) {
      // Fetched tasks load on a second connection while the next ones are fetched.
      const sibling = await c.wh.sibling();
      try {
        const pull = await collectByPull({
          client: c.client,
          wh: c.wh,
          store: c.store,
          postEndpoints: pullEndpoints,
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
        pending += pull.pending;
      } finally {
        sibling.close();
      }
    }
    if (crawls) {
      const pages = await collectOnPage({
        client: c.client,
        wh: c.wh,
        store: c.store,
        readsOf: (job) => {
          const j = c.o.pipeline.jobs.find((x) => x.name === job);
          return j?.kind === 'on_page' ? { read: j.read, maxItems: j.max_items, pageSize: j.page_size } : { read: ['pages'], maxItems: 20_000 };
        },
        pollIntervalMs,
        timeoutMs: Math.max(0, timeoutMs - (c.now().getTime() - started)),
        signal: c.o.signal,
        now: c.now,
        sleep: c.sleep,
        // A crawl is read with a handful of on-page calls once finished: counted as one call left per crawl.
        onProgress: (p) => onProgress({ ...p, posted: p.collected + p.failed + p.pending, ready: 0, refetched: 0, callsLeft: [{ family: endpoint('on_page.pages').family, calls: p.pending }] }),
      });
      for (const t of pages.tables) tables.add(t);
      pending += pages.pending;
    }
    await postingLine(c, []); // the last line counts what the loader committed after the last poll
    return { tables, stop: await leftStop(c, pending) };
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
 * POSTs of `task_post` batches in flight at once. One at a time, the tasks-table writes and
 * the landing of each answer left most of the family's rate-limit window unused while
 * posting (bench/engine.ts). With a budget they go one at a time: each batch is then priced
 * by what the ones before it were charged.
 */
const POSTS_IN_FLIGHT = 8;

/**
 * Posts batches in order, a few `task_post` POSTs at once; live calls go a few at a time
 * and alone. A budget, a 402, an abort or a POST with no answer stops posting (returned,
 * so what was posted is still collected; POSTs already in flight finish); a refused key
 * ends the run.
 */
async function postAll(c: Ctx, batches: readonly PlannedBatch[], touched: Set<string>): Promise<Stop | null> {
  let liveDone = 0;
  let stop: Stop | null = null;
  let fatal: { err: unknown } | undefined;
  const flying = new Map<PlannedBatch, Promise<void>>();
  const atOnce = c.o.pipeline.budget_cny === undefined ? POSTS_IN_FLIGHT : 1;
  const landed = async () => {
    await Promise.all(flying.values());
  };
  for (let i = 0; i < batches.length && !stop && !fatal; ) {
    const first = batches[i]!;
    if (c.o.signal?.aborted) {
      stop = { kind: 'interrupted', reason: `interrupted before batch ${first.no} of ${batches.length}; run again to resume` };
      break;
    }
    if (first.endpoint.mode === 'live') {
      await landed();
      if (stop || fatal) break;
      const group: PlannedBatch[] = [first];
      while (group.length < LIVE_CONCURRENCY && batches[i + group.length]?.endpoint.mode === 'live') group.push(batches[i + group.length]!);
      const over = await overBudget(c, group);
      if (over) return { kind: 'budget', reason: over };
      i += group.length;
      const liveStop = await postLive(c, group, touched);
      liveDone += group.length;
      if (liveStop) return liveStop;
      const last = i === batches.length || batches[i]!.endpoint.mode !== 'live';
      if (last || liveDone % (LIVE_CONCURRENCY * 25) === 0) c.note(`live calls: ${liveDone} answered and loaded (through batch ${group.at(-1)!.no}/${batches.length})`);
      await postingLine(c, batches.slice(i));
      continue;
    }
    while (flying.size >= atOnce) await Promise.race(flying.values());
    if (stop || fatal) break;
    const over = await overBudget(c, [first]);
    if (over) {
      stop = { kind: 'budget', reason: over };
      break;
    }
    i++;
    const rest = batches.slice(i);
    // Never rejects: a failure is kept in `stop` or `fatal`, and no new POST starts after it.
    const posting = (async () => {
      try {
        try {
          await postBatch(c, first);
          c.note(`posted batch ${first.no}/${batches.length} (${first.tasks.length} tasks)`);
        } catch (err) {
          stop ??= await failedPost(c, first, err);
        }
        await postingLine(c, rest);
      } catch (err) {
        fatal ??= { err };
      }
    })().finally(() => flying.delete(first));
    flying.set(first, posting);
  }
  await landed();
  if (fatal) throw fatal.err;
  return stop;
}

/** A progress line while posting: what is posted, collected and charged, and the time left at the rate limit. */
async function postingLine(c: Ctx, left: readonly PlannedBatch[]): Promise<void> {
  if (!c.o.onProgress) return;
  const rest = left.map((b) => ({ endpoint: b.endpoint, tasks: b.tasks.length }));
  c.o.onProgress({ kind: 'collect', ...(await postingProgress(c.wh, c.runId, rest, c.client.limiter, fromMicros(c.charged.micros))) });
}

/** Codes of a POST that created nothing (no connection, 401, 402, repeated 429). */
const REFUSED = ['ETL_SERVICE_UNAVAILABLE', 'ETL_RATE_LIMITED', 'ETL_PAYMENT_REQUIRED', 'ETL_AUTH'];

/** Records a failed POST's tasks (refused: `unsent`; anything else: `unknown`) and says whether posting stops. */
async function failedPost(c: Ctx, batch: PlannedBatch, err: unknown): Promise<Stop> {
  if (!(err instanceof EtlError)) throw err;
  const refused = REFUSED.includes(err.code);
  await markTasks(c.wh, c.runId, batch.tasks.map((t) => t.tag), refused ? 'unsent' : 'unknown', err.message);
  if (err.code === 'ETL_AUTH' || err.code === 'ETL_REQUEST_INVALID') throw err;
  const kind = err.code === 'ETL_PAYMENT_REQUIRED' ? 'balance' : refused ? 'unavailable' : 'unknown';
  return { kind, reason: err.message };
}

/**
 * A few live calls at once. Their tasks are recorded with their tags first; each answer is
 * landed by the client before anything reads it; then every answered task's rows and its
 * collected mark commit together. A failed call stops posting after the others are loaded.
 */
async function postLive(c: Ctx, group: PlannedBatch[], touched: Set<string>): Promise<Stop | null> {
  await c.store.planTasks(
    group.flatMap((b) => b.tasks.map((t) => ({ tag: t.tag, job: t.job, endpointId: t.endpoint.id, batchNo: b.no, spec: t.spec }))),
    c.now(),
  );
  const answers = await Promise.allSettled(group.map((b) => c.client.call(b.endpoint, { tasks: b.tasks.map((t) => t.spec) })));
  const ok: string[] = [];
  let stop: Stop | null = null;
  let fatal: unknown;
  for (const [k, answer] of answers.entries()) {
    const batch = group[k]!;
    if (answer.status === 'fulfilled') {
      const rows = postedRows(batch, answer.value);
      await c.store.recordPosted(rows, c.now());
      for (const r of rows) if (r.ok && r.taskId) ok.push(r.taskId);
      continue;
    }
    try {
      stop ??= await failedPost(c, batch, answer.reason);
    } catch (err) {
      fatal ??= err;
    }
  }
  const loaded = await loadLiveTasks(c.wh, c.store, ok, c.now());
  for (const t of loaded.tables) touched.add(t);
  if (fatal !== undefined) throw fatal;
  return stop;
}

/** Loads live answers a crash left unloaded, and records live tasks whose answer was lost. */
async function settleLiveTasks(c: Ctx, touched: Set<string>): Promise<void> {
  const r = await settleLive({ wh: c.wh, store: c.store, runId: c.runId, at: c.now(), isLive: (id) => isLiveId(id) });
  for (const t of r.tables) touched.add(t);
  if (r.loaded) c.note(`${r.loaded} live answer(s) already paid for loaded from the raw landing (no call)`);
  if (r.lost) c.note(`${r.lost} live task(s) were charged but their answer never arrived; recorded as failed, not bought again`);
}

function isLiveId(id: string): boolean {
  try {
    return endpoint(id).mode === 'live';
  } catch {
    return false;
  }
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
  const rows = postedRows(batch, call);
  c.push?.answered(tags, rows);
  await c.store.recordPosted(rows, c.now());
  c.push?.recorded(rows.map((r) => r.taskId));
}

/**
 * Stops posting before the next batch would pass the budget. The next batch is priced at
 * the average charge per task seen so far in this run, or before the first POST at what
 * the ledger says earlier runs paid; a task never bought before is not priced (0), so a
 * first run of a new pipeline can pass the budget by at most one batch.
 */
async function overBudget(c: Ctx, group: readonly PlannedBatch[]): Promise<string | null> {
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
  let next = 0;
  for (const batch of group) {
    const known = history.byPipeline.get(`${c.o.pipeline.name}\0${batch.endpoint.id}`) ?? history.byEndpoint.get(batch.endpoint.id);
    const perTask = row && row.tasks > 0 ? spent / row.tasks : (known ?? 0);
    next += perTask * batch.tasks.length;
  }
  if (spent + next > budget) {
    return `budget of ${budget} CNY reached: ${spent.toFixed(4)} CNY spent, the next ${group.length > 1 ? `${group.length} calls` : 'batch'} would cost about ${next.toFixed(4)} CNY; raise budget_cny and run again to continue`;
  }
  return null;
}
