import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { abortableSleep } from './abortable-sleep.js';
import { collectGarbage } from './collect-garbage.js';
import { alertStep, type AlertOutcome } from '../alerts/index.js';
import { withWarehouse, runFinishedSql, type RunStep, type Warehouse } from '../warehouse/index.js';
import { ingestStep } from './ingest-step.js';
import { LiveStatus, readLiveRun, type LiveRun } from './live-status.js';
import { clustersStep, modelsStep, type ClustersOutcome, type ModelsOutcome } from './models-step.js';
import { lakePreflight, lakeStep, lakeSynced } from './lake-step.js';
import { killPoint } from './kill-point.js';
import { RESUME_WITHIN_MS } from './ingest-step.js';
import { publishStep, type PublishedSummary } from './publish-step.js';
import type { RunOptions } from './run-options.js';
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
 * One run of a pipeline, the same for `pipeline run`, `pipeline schedule` and the tests: a
 * sequence of steps, each returning its outcome.
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
  const now = o.now ?? (() => new Date());
  const sleep = o.sleep ?? abortableSleep(o.signal);
  const env = o.env ?? process.env;
  await lakePreflight(o.lake, env);
  // Every line of a run carries its pipeline, and its run id once known (`onRunId` below):
  // a night's lines can be told apart from another pipeline's in the scheduler's one log.
  const pipelineLog = o.logger.child({ pipeline: o.pipeline.name });
  let log = pipelineLog;
  // Wall time of each step, in the outcome and the log: what a night spends where.
  const stepsMs: Record<string, number> = {};
  const stepsPeakMb: Record<string, number> = {};
  // Where the run stands, for `pipeline status` while this process holds the database.
  let live: LiveStatus | undefined;
  const timed = async <T>(step: string, fn: () => Promise<T>): Promise<T> => {
    live?.step(step);
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      stepsMs[step] = Math.round(performance.now() - t0);
      stepsPeakMb[step] = Math.round(process.resourceUsage().maxRSS / 1024);
      log.info({ step, ms: stepsMs[step], peakMb: stepsPeakMb[step] }, 'step done');
    }
  };
  // Two invocations of one pipeline at once (a second scheduler, an analyst's run beside the
  // nightly one): the second waits for the warehouse, and must not buy the night the first just
  // bought. Only when it did wait is the runs table asked.
  const invoked = now();
  let waited = false;
  // The run that held the warehouse when this one found it held, as its live file names it: a
  // run finishes (runs.finished_at) before its end steps (models, publish, checkpoint), so one
  // invoked during those would not see it as completed "since". The file lasts until it lets go.
  let holder: LiveRun | undefined;
  const onWait = (message: string) => {
    waited = true;
    holder = readLiveRun(resolve(o.warehouseDir));
    log.warn(message);
  };
  // One run: its ingest (a new run, a resumed one, or one that owes only its later steps), then
  // each later step it has not done yet, each recorded in its journal (`run_steps`) when done.
  const runSteps = async (
    seen: RunOptions,
    wh: Warehouse,
    indexOn: Warehouse,
    tried: ReadonlySet<string>,
  ): Promise<{ outcome: RunOutcome; resumedStartedAt?: Date }> => {
    const ingest = await timed('ingest', () => {
      killPoint('ingest', 'start');
      return ingestStep(seen, wh, indexOn, now, sleep, tried);
    });
    const { ctx } = ingest;
    const { store } = ctx;
    // What the run's journal holds: a run resumed to finish its steps does only those it owes.
    const journal = await store.steps();
    const owes = (step: RunStep) => !(journal.get(step)?.done ?? false);
    const step = async <T>(name: RunStep, fn: () => Promise<T>, detail: string | null = null): Promise<T | undefined> => {
      if (!owes(name)) return undefined;
      killPoint(name, 'start');
      await store.stepStarted(name, now(), detail);
      const out = await timed(name, fn);
      await store.stepDone(name, now());
      return out;
    };
    const skip = async (name: RunStep, why: string) => {
      if (owes(name)) await store.stepDone(name, now(), `skipped: ${why}`);
    };
    const collected = (await store.countsByEndpoint()).some((r) => r.collected > 0);
    // Each later step starts without what the one before left in memory: in DuckDB's (the
    // night's uncheckpointed rows, a year's cached blocks: Warehouse.releaseMemory) and in the
    // JavaScript heap (collectGarbage).
    const handBack = async () => {
      await wh.releaseMemory();
      collectGarbage();
    };
    // Clusters first: their label calls are charged, and the spend mart the models build
    // (and the run publishes) counts every charge of the run. They read no model.
    // After Ctrl-C no label call is made: `pipeline models cluster` (or the next run) builds them.
    const interrupted = o.signal?.aborted === true;
    if (ingest.embedded && interrupted && owes('clusters'))
      ctx.note("clusters not built: interrupted; 'pipeline models cluster' builds them");
    if (!ingest.embedded) await skip('clusters', 'no embeddings job ran');
    const clusters = ingest.embedded && !interrupted ? await step('clusters', () => clustersStep(ctx, ingest.plan.tasks)) : undefined;
    const buildModels = o.models !== false && collected;
    if (!buildModels) await skip('models', o.models === false ? '--no-models' : 'nothing collected');
    const models = buildModels
      ? await step('models', async () => {
          await handBack();
          return modelsStep(ctx);
        })
      : undefined;
    // Alerts speak only of data whose models are built and tested; they are published with the rest.
    const evaluate = o.pipeline.alerts !== undefined && o.alerts !== false;
    if (!evaluate) await skip('alerts', o.pipeline.alerts ? 'turned off' : 'no alerts: block');
    const alerts = evaluate
      ? await step('alerts', () =>
          alertStep({
            wh,
            pipeline: o.pipeline,
            runId: ctx.runId,
            runState: ingest.state,
            stopReason: ingest.stop?.reason ?? null,
            estimateCny: ingest.estimateCny,
            now,
            logger: log,
            dispatcher: o.dispatcher,
            env: o.env,
            afterBuild: () => killPoint('alerts', 'middle'),
          }),
        )
      : undefined;
    await wh.flushIndex();
    const published = await step('publish', async () => {
      await handBack();
      return publishStep(wh, now);
    });
    // The summary is read back from the warehouse at every invocation (it is what is printed);
    // the journal records it once.
    if (owes('summary')) {
      killPoint('summary', 'start');
      await store.stepStarted('summary', now());
    }
    const summary = await timed('summary', () =>
      summarize(wh, {
        runId: ctx.runId,
        pipeline: o.pipeline.name,
        state: ingest.state,
        stopReason: ingest.stop?.reason ?? null,
        stopKind: ingest.stop?.kind ?? null,
        started: ingest.started,
        finished: now(),
        warehouseDir: wh.dir,
      }),
    );
    if (owes('summary')) {
      killPoint('summary', 'middle');
      await store.stepDone('summary', now());
    }
    // The night's rows go into the database file last (CHECKPOINT_THRESHOLD: once a run), with
    // everything handed back first: the checkpoint reads the rows back from DuckDB's temp folder
    // as it writes them, and would otherwise run on top of all of them (and of the steps'
    // garbage). Should it fail (durability does not need it: the rows are in the log), the
    // close checkpoints instead.
    await step('checkpoint', async () => {
      await handBack();
      killPoint('checkpoint', 'middle');
      await wh
        .checkpoint()
        .catch((err: unknown) =>
          log.warn({ err: (err as Error).message }, 'checkpoint before closing the warehouse failed; the close checkpoints instead'),
        );
    });
    // The lake is mirrored while the warehouse is held: nothing else (an export, a models run,
    // the next run) rewrites parquet/ under the upload. A run that owes its lake step syncs to
    // this invocation's lake, else to the one it was started with (its journal keeps it). The
    // step is done only when every file is up: until then the run is not finished, and the next
    // invocation (a run, a scheduled night, `pipeline lake sync`) syncs first, buying nothing.
    const lakeUrl = o.lake ?? journal.get('lake')?.detail ?? undefined;
    if (!lakeUrl) await skip('lake', 'no lake');
    let lake: RunOutcome['lake'];
    if (lakeUrl && owes('lake')) {
      killPoint('lake', 'start');
      await store.stepStarted('lake', now(), lakeUrl);
      lake = await timed('lake', () => lakeStep(o.warehouseDir, lakeUrl, env));
      if (lakeSynced(lake)) await store.stepDone('lake', now());
    }
    const lakeBehind = lake !== undefined && !lakeSynced(lake);
    return {
      resumedStartedAt: ingest.resumedStartedAt,
      outcome: {
        ...summary,
        ...(lake ? { lake } : {}),
        ...(lakeBehind ? { lakeBehind: true } : {}),
        ...(ingest.readings.probedAt !== null
          ? {
              serviceReadings: {
                probedAt: ingest.readings.probedAt,
                ageDays: ingest.readings.ageDays ?? 0,
                old: ingest.readings.old,
                used: ingest.readings.used,
              },
            }
          : {}),
        resumed: ingest.resumed,
        ...(models ? { models } : {}),
        ...(clusters ? { clusters } : {}),
        ...(alerts ? { alerts } : {}),
        ...(published ? { published } : {}),
        stepsMs,
        stepsPeakMb,
      },
    };
  };
  const outcome = await withWarehouse(
    o.warehouseDir,
    async (wh): Promise<RunOutcome> => {
      if (waited && !o.newRun) {
        const held = holder?.pipeline === o.pipeline.name ? holder.runId : null;
        const other = await completedSince(wh, o.pipeline.name, invoked, held);
        if (other) {
          const text = `run ${other.runId} of ${o.pipeline.name} completed while this one waited for the warehouse: nothing was bought again ('pipeline run --new-run' buys the night again)`;
          o.onProgress?.({ kind: 'note', text });
          pipelineLog.child({ runId: other.runId }).warn(text);
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
      }
      const status = (live = new LiveStatus(wh.dir, o.pipeline.name, now));
      const seen: RunOptions = {
        ...o,
        onProgress: (e) => {
          status.event(e);
          o.onProgress?.(e);
        },
        onRunId: (id) => {
          log = pipelineLog.child({ runId: id });
          status.runId(id);
          o.onRunId?.(id);
        },
      };
      const indexOn = await wh.sibling();
      // Runs this invocation finished (or tried to): the loop below does not take them again.
      const tried = new Set<string>();
      try {
        for (;;) {
          const out = await runSteps(seen, wh, indexOn, tried);
          // A run resumed only to do the steps it owed bought nothing: when it was another night's
          // (or --new-run asked for a new run), tonight's run follows, in this same invocation.
          const from = out.resumedStartedAt;
          const again =
            from !== undefined && o.signal?.aborted !== true && (o.newRun === true || now().getTime() - from.getTime() > RESUME_WITHIN_MS);
          if (!again) return out.outcome;
          tried.add(out.outcome.runId);
          log.info("finished the steps an earlier run owed; starting tonight's");
        }
      } finally {
        // Rows still deferred: committed now (the next run's reindex would rebuild them otherwise).
        await wh
          .flushIndex()
          .catch((err: unknown) =>
            log.warn(
              { err: (err as Error).message },
              'deferred raw index rows not committed; the next run rebuilds them from the raw files',
            ),
          );
        indexOn.close();
      }
    },
    { onWait },
  ).finally(() => {
    // Removed once the database is let go, not before: a run waiting for it reads who held it.
    live?.end();
    live = undefined;
  });
  return outcome;
}

/**
 * The run of `pipeline` that completed (its end steps done and published) while this process
 * waited for the warehouse, if any: the run that held it (`held`, from its live file), or one
 * that finished at or after `since`.
 */
async function completedSince(
  wh: Warehouse,
  pipeline: string,
  since: Date,
  held: string | null,
): Promise<{ runId: string; startedAt: Date; finishedAt: Date } | undefined> {
  const [r] = await wh.all<{ run_id: string; started_at: Date; finished_at: Date }>(
    `SELECT r.run_id, r.started_at, r.finished_at FROM runs AS r JOIN publish_runs AS p USING (run_id)
     WHERE r.pipeline = $1 AND r.state = 'completed' AND p.state = r.state AND p.finished_at = r.finished_at AND ${runFinishedSql('r', 'p')}
       AND (r.finished_at >= $2::TIMESTAMPTZ OR r.run_id IS NOT DISTINCT FROM $3)
     ORDER BY r.finished_at DESC LIMIT 1`,
    [pipeline, since.toISOString(), held],
  );
  return r && { runId: r.run_id, startedAt: new Date(r.started_at), finishedAt: new Date(r.finished_at) };
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
