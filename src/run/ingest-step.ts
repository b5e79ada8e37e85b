import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { validateTasks } from '../client/index.js';
import { resolveCollection } from '../config/index.js';
import { EtlError } from '../errors.js';
import { embeddingJobs } from '../jobs/index.js';
import {
  planPipeline,
  pullNightTooLong,
  readDepthHistory,
  readingsInUse,
  type Plan,
  type PlannedBatch,
  type ReadingsInUse,
} from '../plan/index.js';
import { readServiceReadings, RUN_STEPS, runQueries, RunStore, type UnfinishedRun, type Warehouse } from '../warehouse/index.js';
import { preflightJobs } from './preflight.js';
import { makeContext, type RunContext, type RunWorld, type Stop } from './context.js';
import { planEstimateCny } from './estimate.js';
import { INGEST_PHASES } from './ingest-phases.js';
import { RESUME_WITHIN_MS, type RunOptions } from './run-options.js';
import { settleStep } from './settle-step.js';
import { runSteps, type Step } from './step-runner.js';

/** `20261121T230600Z-3f9a1c`: sortable by time, unique per invocation. */
export function newRunId(now: Date): string {
  return `${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`;
}

/** What the ingest steps leave for the steps after them. */
export interface IngestOutcome {
  ctx: RunContext;
  plan: Plan;
  started: Date;
  resumed: boolean;
  /** When the run resumed to finish the steps it owed (nothing bought) had started. */
  resumedStartedAt?: Date;
  state: 'completed' | 'partial';
  stop: Stop | null;
  /** The plan priced from earlier runs' ledger before anything was spent (null: never bought before). */
  estimateCny: number | null;
  /** Whether an `embeddings` job ran (the keywords to cluster are the plan's). */
  embedded: boolean;
  /** What the run took from `pipeline doctor --probe`'s record (readings-use.ts). */
  readings: ReadingsInUse;
}

/** The recorded service readings to follow; a record that cannot be read is said and not followed. */
async function recordedReadings(o: RunOptions, now: Date): Promise<{ readings: ReadingsInUse; problem?: string }> {
  try {
    return { readings: readingsInUse(await readServiceReadings(o.warehouseDir), now) };
  } catch (err) {
    return {
      readings: readingsInUse(null, now),
      problem: `service readings not used: ${(err as Error).message}; run pipeline doctor --probe --yes to record them again`,
    };
  }
}

/** A run chosen and planned, before anything is posted: what the ingest's phases share. */
export interface IngestRun {
  o: RunOptions;
  ctx: RunContext;
  plan: Plan;
  started: Date;
  /** The unfinished run resumed, if any. */
  resume?: UnfinishedRun;
  readings: ReadingsInUse;
  /** Why the recorded readings were not followed, when they could not be read. */
  readingsProblem?: string;
  collection: ReturnType<typeof resolveCollection>;
  estimateCny: number | null;
  /** What stopped the run early, as the phases find it. */
  stop: Stop | null;
  /** The planned tasks still to post, packed into POSTs, and their tags (the plan phase). */
  batches: PlannedBatch[];
  toPost: string[];
  embedded: boolean;
}

/**
 * The ingest steps of a run: settle earlier unfinished runs, resume or start this one, post,
 * collect, load, embed, compact the raw landing, record the run's end state. The latest
 * unfinished run of the same pipeline, when it started less than {@link RESUME_WITHIN_MS} ago,
 * is resumed under its own id (so its tags match): what it posted is collected first, tasks of
 * unknown outcome are looked up by tag, then only what never reached the service is posted. A
 * completed run whose journal still owes steps (killed after its loads, or its lake upload
 * failed) is resumed first, whatever its age, without a call: nothing is posted, collected or
 * embedded, its outcome is returned as it was, and the steps it owes finish it (runPipeline). A
 * budget, a 402, an unknown outcome or an abort stops posting cleanly, and the outcome says why.
 * An error marks the run failed and is thrown.
 */
export async function ingestStep(
  o: RunOptions,
  wh: Warehouse,
  indexOn: Warehouse,
  now: () => Date,
  sleep: (ms: number) => Promise<void>,
  tried: ReadonlySet<string> = new Set(),
): Promise<IngestOutcome> {
  const r = await prepareRun(o, wh, indexOn, now, sleep, tried);
  if (r.resume?.state === 'completed') return owedStepsOnly(r, r.resume);
  const { ctx } = r;
  const { store, log } = ctx;
  await openRun(r);
  await store.recordJobs(o.pipeline.jobs);
  try {
    await runSteps(
      INGEST_PHASES.map((s) => timedPhase(s, log)),
      r,
    );
    const state = r.stop === null ? 'completed' : 'partial';
    await store.finishRun(state, r.stop?.reason ?? null, now());
    log.info({ state, stop: r.stop?.kind }, 'run finished');
    const { plan, started, stop, estimateCny, embedded, readings } = r;
    return { ctx, plan, started, resumed: r.resume !== undefined, state, stop, estimateCny, embedded, readings };
  } catch (err) {
    await store.finishRun('failed', err instanceof Error ? err.message : String(err), now());
    throw err;
  } finally {
    await ctx.push?.close();
  }
}

/** An ingest phase whose wall time and memory (peak RSS, RSS, JS heap) are logged (info) when it ends: where a night's time and memory go. */
function timedPhase(s: Step<IngestRun>, log: RunContext['log']): Step<IngestRun> {
  return {
    ...s,
    run: async (r) => {
      const t0 = performance.now();
      await s.run(r);
      const mb = (bytes: number) => Math.round(bytes / 1048576);
      const { rss, heapUsed, external } = process.memoryUsage();
      const peakMb = Math.round(process.resourceUsage().maxRSS / 1024);
      // RSS beyond the JS heap and its buffers is mostly DuckDB's own memory.
      log.info(
        { phase: s.name, ms: Math.round(performance.now() - t0), peakMb, rssMb: mb(rss), heapMb: mb(heapUsed), externalMb: mb(external) },
        'ingest phase done',
      );
    },
  };
}

/**
 * Chooses the run (a new one, or an unfinished one resumed), plans it, checks every task
 * against the catalog before the first call, and settles the older unfinished runs.
 */
async function prepareRun(
  o: RunOptions,
  wh: Warehouse,
  indexOn: Warehouse,
  now: () => Date,
  sleep: (ms: number) => Promise<void>,
  tried: ReadonlySet<string>,
): Promise<IngestRun> {
  const started = now();
  // Runs this invocation already finished (or tried to: a lake still down) are not taken again.
  const unfinished = (await RunStore.unfinishedRuns(wh, o.pipeline.name)).filter((r) => !tried.has(r.runId));
  const resume = runToResume(o, unfinished, started);
  const runId = resume?.runId ?? newRunId(started);
  o.onRunId?.(runId);
  const recorded = await recordedReadings(o, started);
  const { readings } = recorded;
  // `depth: auto` jobs choose each series' depth from the warehouse's checks before this run (its own left out).
  const history = await readDepthHistory(wh, o.pipeline, runId, resume?.startedAt ?? started);
  const plan = planPipeline(o.pipeline, runId, readings.tasksPerPost, history);
  const collection = resolveCollection(o.pipeline.collection, {
    ...o.collection,
    ...(o.collectTimeoutMs !== undefined ? { deadlineMs: o.collectTimeoutMs } : {}),
  });
  // Every task is checked against the catalog before the first call of the run.
  for (const b of plan.batches)
    validateTasks(
      b.endpoint,
      b.tasks.map((t) => t.spec),
    );
  // A night pull cannot finish before the next one starts is refused before any call: push is the way at that size.
  if (!resume && (collection.mode === 'pull' || collection.callback === 'pingback')) {
    const { schedule, timezone } = o.pipeline;
    const tooLong = pullNightTooLong(plan, { schedule, timezone, now: started, minuteMs: o.limits?.windowMs });
    if (tooLong) throw new EtlError('ETL_CONFIG_INVALID', tooLong.message, { context: { stage: 'plan' } });
  }
  const world: RunWorld = { o, wh, indexOn, now, sleep, charged: { micros: 0n }, collection };
  // A completed run owing steps has nothing to collect or look up: it is never settled, and when
  // it is the one resumed, only the steps it owes run (and nothing else is settled meanwhile).
  if (resume?.state !== 'completed')
    for (const old of unfinished) if (old !== resume && old.state !== 'completed') await settleStep(makeContext(world, old.runId), runId);
  const ctx = makeContext(world, runId);
  const estimateCny = await planEstimateCny(wh, plan);
  return {
    o,
    ctx,
    plan,
    started,
    ...(resume ? { resume } : {}),
    readings,
    ...(recorded.problem ? { readingsProblem: recorded.problem } : {}),
    collection,
    estimateCny,
    stop: null,
    batches: [],
    toPost: [],
    embedded: false,
  };
}

/**
 * The unfinished run to resume, if any. A run that bought and loaded everything but owes later
 * steps (clusters, models, alerts, publish, summary, checkpoint, lake) is finished first,
 * whatever its age and even with --new-run: its steps are done, nothing is bought for them
 * (runPipeline then goes on to tonight's run when that one is another night's, or --new-run
 * asked for one). Otherwise only a run of this night is resumed (started less than
 * RESUME_WITHIN_MS ago); an older one is settled and tonight's run starts, so a night stopped
 * at its budget does not leave every later night resuming it.
 */
function runToResume(o: RunOptions, unfinished: readonly UnfinishedRun[], started: Date): UnfinishedRun | undefined {
  const owed = unfinished.find((r) => r.state === 'completed');
  const latest = unfinished.at(-1);
  return owed ?? (o.newRun || !latest || started.getTime() - latest.startedAt.getTime() > RESUME_WITHIN_MS ? undefined : latest);
}

/**
 * A completed run killed after its loads committed, before its end steps (models, alerts,
 * publish) were done: every task is collected and loaded, so nothing is posted, collected or
 * embedded again, and the run keeps its outcome. The steps after the ingest finish it.
 */
async function owedStepsOnly(r: IngestRun, resume: UnfinishedRun): Promise<IngestOutcome> {
  const { ctx, o } = r;
  const steps = await ctx.store.steps();
  const owes = [...RUN_STEPS].filter((s) => s !== 'ingest' && !(steps.get(s)?.done ?? false));
  ctx.note(
    `resuming unfinished run ${ctx.runId} (started ${resume.startedAt.toISOString()}): its tasks are collected and loaded; finishing the steps it owes (${owes.join(', ')}), buying nothing`,
  );
  ctx.log.info({ runId: ctx.runId }, 'resuming a completed run whose end steps never finished');
  return {
    ctx,
    plan: r.plan,
    started: r.started,
    resumedStartedAt: resume.startedAt,
    resumed: true,
    state: 'completed',
    stop: null,
    estimateCny: r.estimateCny,
    embedded: embeddingJobs(o.pipeline.jobs).length > 0,
    readings: r.readings,
  };
}

/** Starts the run in the runs table, or reopens the one resumed; a new run's job kinds are preflighted first. */
async function openRun(r: IngestRun): Promise<void> {
  const { o, ctx, resume, started } = r;
  const { store, log, note, wh, now } = ctx;
  if (!resume && !o.signal?.aborted) {
    // What the service's reference lists refuse (a model, a location, a lighthouse version)
    // would be refused only after the other tasks were paid for: each job kind's preflight.
    // (A run stopped before it started posts nothing, and asks nothing either.)
    for (const warning of await preflightJobs(ctx.client, o.pipeline, o.file, { wh, now })) log.warn(warning);
  }
  if (resume) {
    await store.reopenRun();
    note(`resuming unfinished run ${ctx.runId} (started ${resume.startedAt.toISOString()}): collecting what it posted first`);
    return;
  }
  // A second run the same day buys every task again: said, not refused (a pipeline may be
  // scheduled twice a day), so that an analyst's repeat by hand is not a silent purchase.
  const earlier =
    ctx.client.keyKind === 'sandbox' ? undefined : await runQueries.completedToday(wh, o.pipeline.name, o.pipeline.timezone, started);
  if (earlier) {
    const msg = `a run of ${o.pipeline.name} already completed today (${earlier.runId}, started ${earlier.startedAt}): this run buys its ${r.plan.tasks.length} tasks again`;
    note(msg);
    log.warn({ earlierRun: earlier.runId }, msg);
  }
  await store.startRun({ file: o.file, baseUrl: o.baseUrl, keyKind: ctx.client.keyKind, at: started });
}
