import { resolve } from 'node:path';
import { abortableSleep } from './abortable-sleep.js';
import type { AlertOutcome } from '../alerts/index.js';
import { runQueries, withWarehouse, type Warehouse } from '../warehouse/index.js';
import { LiveStatus, readLiveRun, type LiveRun } from './live-status.js';
import type { ClustersOutcome, ModelsOutcome } from './models-step.js';
import { lakePreflight, lakeSynced, type lakeStep } from './lake-step.js';
import { RESUME_WITHIN_MS } from './run-options.js';
import type { PublishedSummary } from './publish-step.js';
import type { RunOptions } from './run-options.js';
import { RUN_STEPS_LIST, runHooks, type RunCtx } from './run-steps.js';
import { runSteps, stepTimer } from './step-runner.js';
import { summarize, type RunSummary } from './summary.js';

export { newRunId } from './ingest-step.js';
export type { ProgressEvent, RunOptions } from './run-options.js';

/** What a run did: the ingest summary and what each later step did (absent when skipped). */
export interface RunOutcome extends RunSummary {
  models?: ModelsOutcome;
  clusters?: ClustersOutcome[];
  /** Alerts evaluated and delivered (absent when the pipeline has no `alerts:` block). */
  alerts?: AlertOutcome;
  published?: PublishedSummary;
  /** Wall milliseconds of each step that ran (ingest, clusters, models, alerts, publish, summary, checkpoint, lake). */
  stepsMs?: Record<string, number>;
  /** The process's peak RSS in MB when each step ended (a high-water mark: the first step that raises it is where memory goes). */
  stepsPeakMb?: Record<string, number>;
  /** What the lake step uploaded, or why it could not (the data is loaded and published locally either way). */
  lake?: Awaited<ReturnType<typeof lakeStep>>;
  /**
   * True when the run bought, loaded and published here and only the lake is behind (its upload
   * failed): exit 9, and the next invocation (a run, a scheduled night, `pipeline lake sync`)
   * syncs first, buying nothing.
   */
  lakeBehind?: boolean;
  /**
   * The readings of `service-readings.json` (`pipeline doctor --probe`) the run followed or
   * assumed, and when they were recorded; `old` past 30 days. Absent when no probe ran there.
   */
  serviceReadings?: { probedAt: string; ageDays: number; old: boolean; used: Record<string, string | number> };
}

/**
 * One run of a pipeline, the same for `pipeline run`, `pipeline schedule` and the tests: a list
 * of steps (`run-steps.ts`), each a name, when it runs and what it does, run by one runner
 * (`step-runner.ts`) that times each, hands memory back where a step asks, and records each in
 * the run's journal.
 *
 * 1. ingest: settle earlier unfinished runs, resume or start this one, post, collect, load,
 *    embed (`ingest-step.ts`);
 * 2. clusters: when the pipeline has an `embeddings` job that ran, cluster and label its keywords
 *    (the label chat calls are in the ledger before `spend_daily` is built from it);
 * 3. models: build and test the SQL models when tasks were collected (`--no-models` skips);
 * 4. alerts: evaluate the pipeline's `alerts:` rules and deliver what is pending;
 * 5. publish: Parquet of what changed, marts included, and a fresh `serving.duckdb` for readers;
 * 6. summary, then checkpoint: the night's rows written into the database file, with the memory
 *    of the steps before handed back first;
 * 7. lake: the published files mirrored to object storage, when one is set.
 *
 * The data is loaded and the run's state recorded before the models are built, so a model
 * that fails costs no paid result: the outcome says so and the CLI exits 1. Each step after the
 * ingest is recorded in the run's journal (`run_steps`) when it starts and when it is done or
 * skipped; a run is finished when every step is done, the lake included. A run killed anywhere
 * after its loads, or whose lake upload failed (exit 9, `lakeBehind`), stays unfinished: the next
 * invocation resumes it first, does only the steps it owes and buys nothing
 * (`RunStore.unfinishedRuns`); when that run was another night's (or `--new-run` was asked),
 * tonight's run follows in the same invocation.
 */
export async function runPipeline(o: RunOptions): Promise<RunOutcome> {
  const env = o.env ?? process.env;
  await lakePreflight(o.lake, env);
  const inv = invocation(o);
  const outcome = await withWarehouse(o.warehouseDir, (wh) => runHeld(inv, wh), { onWait: inv.onWait }).finally(() => {
    // Removed once the database is let go, not before: a run waiting for it reads who held it.
    inv.live?.end();
    inv.live = undefined;
  });
  return outcome;
}

/** One invocation of `runPipeline`: its options, clock, log and timings, and whom it waited for. */
interface Invocation {
  o: RunOptions;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  pipelineLog: RunOptions['logger'];
  log: RunOptions['logger'];
  timer: ReturnType<typeof stepTimer>;
  /** Where the run stands, for `pipeline status` while this process holds the database. */
  live?: LiveStatus;
  invoked: Date;
  /**
   * Two invocations of one pipeline at once (a second scheduler, an analyst's run beside the
   * nightly one): the second waits for the warehouse, and must not buy the night the first just
   * bought. Only when it did wait is the runs table asked.
   */
  waited: boolean;
  /**
   * The run that held the warehouse when this one found it held, as its live file names it: a
   * run finishes (runs.finished_at) before its end steps (models, publish, checkpoint), so one
   * invoked during those would not see it as completed "since". The file lasts until it lets go.
   */
  holder?: LiveRun;
  onWait: (message: string) => void;
}

function invocation(o: RunOptions): Invocation {
  const now = o.now ?? (() => new Date());
  // Every line of a run carries its pipeline, and its run id once known (`onRunId`): a night's
  // lines can be told apart from another pipeline's in the scheduler's one log.
  const pipelineLog = o.logger.child({ pipeline: o.pipeline.name });
  const inv: Invocation = {
    o,
    now,
    sleep: o.sleep ?? abortableSleep(o.signal),
    pipelineLog,
    log: pipelineLog,
    // Wall time of each step, in the outcome and the log: what a night spends where.
    timer: stepTimer(
      (step) => inv.live?.step(step),
      () => inv.log,
    ),
    invoked: now(),
    waited: false,
    onWait: (message) => {
      inv.waited = true;
      inv.holder = readLiveRun(resolve(o.warehouseDir));
      inv.log.warn(message);
    },
  };
  return inv;
}

/** The invocation once it holds the warehouse: the run it owes, and tonight's after it when that one was another night's. */
async function runHeld(inv: Invocation, wh: Warehouse): Promise<RunOutcome> {
  const { o, now } = inv;
  if (inv.waited && !o.newRun) {
    const other = await completedWhileWaiting(inv, wh);
    if (other) return other;
  }
  const status = (inv.live = new LiveStatus(wh.dir, o.pipeline.name, now));
  const seen: RunOptions = {
    ...o,
    onProgress: (e) => {
      status.event(e);
      o.onProgress?.(e);
    },
    onRunId: (id) => {
      inv.log = inv.pipelineLog.child({ runId: id });
      status.runId(id);
      o.onRunId?.(id);
    },
  };
  const indexOn = await wh.sibling();
  // Runs this invocation finished (or tried to): the loop below does not take them again.
  const tried = new Set<string>();
  try {
    for (;;) {
      const c: RunCtx = { o: seen, wh, indexOn, now, sleep: inv.sleep, tried, log: () => inv.log };
      await runSteps(RUN_STEPS_LIST, c, runHooks(inv.timer.time));
      const outcome = runOutcome(c, inv);
      // A run resumed only to do the steps it owed bought nothing: when it was another night's
      // (or --new-run asked for a new run), tonight's run follows, in this same invocation.
      const from = c.ingest!.resumedStartedAt;
      const again =
        from !== undefined && o.signal?.aborted !== true && (o.newRun === true || now().getTime() - from.getTime() > RESUME_WITHIN_MS);
      if (!again) return outcome;
      tried.add(outcome.runId);
      inv.log.info("finished the steps an earlier run owed; starting tonight's");
    }
  } finally {
    // Rows still deferred: committed now (the next run's reindex would rebuild them otherwise).
    await wh
      .flushIndex()
      .catch((err: unknown) =>
        inv.log.warn(
          { err: (err as Error).message },
          'deferred raw index rows not committed; the next run rebuilds them from the raw files',
        ),
      );
    indexOn.close();
  }
}

/** What the run's steps did, as the outcome. */
function runOutcome(c: RunCtx, inv: Invocation): RunOutcome {
  const ingest = c.ingest!;
  const { lake } = c;
  const lakeBehind = lake !== undefined && !lakeSynced(lake);
  const r = ingest.readings;
  return {
    ...c.summary!,
    ...(lake ? { lake } : {}),
    ...(lakeBehind ? { lakeBehind: true } : {}),
    ...(r.probedAt !== null ? { serviceReadings: { probedAt: r.probedAt, ageDays: r.ageDays ?? 0, old: r.old, used: r.used } } : {}),
    resumed: ingest.resumed,
    ...(c.models ? { models: c.models } : {}),
    ...(c.clusters ? { clusters: c.clusters } : {}),
    ...(c.alerts ? { alerts: c.alerts } : {}),
    ...(c.published ? { published: c.published } : {}),
    stepsMs: inv.timer.ms,
    stepsPeakMb: inv.timer.peakMb,
  };
}

/**
 * The run of the pipeline that completed (its end steps done and published) while this process
 * waited for the warehouse, if any, as the outcome: nothing is bought again.
 */
async function completedWhileWaiting(inv: Invocation, wh: Warehouse): Promise<RunOutcome | undefined> {
  const { o } = inv;
  const held = inv.holder?.pipeline === o.pipeline.name ? inv.holder.runId : null;
  const other = await runQueries.completedSince(wh, o.pipeline.name, inv.invoked, held);
  if (!other) return undefined;
  const text = `run ${other.runId} of ${o.pipeline.name} completed while this one waited for the warehouse: nothing was bought again ('pipeline run --new-run' buys the night again)`;
  o.onProgress?.({ kind: 'note', text });
  inv.pipelineLog.child({ runId: other.runId }).warn(text);
  const summary = await summarize(wh, {
    runId: other.runId,
    pipeline: o.pipeline.name,
    state: 'completed',
    stopReason: null,
    stopKind: null,
    started: other.startedAt,
    finished: other.finishedAt,
    warehouseDir: wh.dir,
  });
  return { ...summary, completedWhileWaiting: other.runId };
}

/**
 * A scheduled night: a tick that only finished an earlier unfinished run still owes tonight's
 * data, so a new run follows it. The same sequence as `pipeline run`, twice at most.
 */
export async function runScheduledNight(o: RunOptions): Promise<RunOutcome> {
  const first = await runPipeline(o);
  if (!first.resumed || o.signal?.aborted) return first;
  o.logger
    .child({ pipeline: o.pipeline.name, runId: first.runId })
    .info({ state: first.state }, "finished an earlier run; starting tonight's");
  return runPipeline({ ...o, newRun: true });
}
