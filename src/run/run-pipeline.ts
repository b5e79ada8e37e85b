import { performance } from 'node:perf_hooks';
import { abortableSleep } from './abortable-sleep.js';
import { collectGarbage } from './collect-garbage.js';
import { alertStep, type AlertOutcome } from '../alerts/index.js';
import { withWarehouse } from '../warehouse/index.js';
import { ingestStep } from './ingest-step.js';
import { LiveStatus } from './live-status.js';
import { clustersStep, modelsStep, type ClustersOutcome, type ModelsOutcome } from './models-step.js';
import { lakePreflight, lakeStep } from './lake-step.js';
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
 * that fails costs no paid result: the outcome says so and the CLI exits 1. A run killed after
 * its loads and before its publish committed stays unfinished: the next run resumes it, runs
 * these steps and buys nothing (`RunStore.unfinishedRuns`).
 */
export async function runPipeline(o: RunOptions): Promise<RunOutcome> {
  const now = o.now ?? (() => new Date());
  const sleep = o.sleep ?? abortableSleep(o.signal);
  const env = o.env ?? process.env;
  await lakePreflight(o.lake, env);
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
      o.logger.info({ step, ms: stepsMs[step], peakMb: stepsPeakMb[step] }, 'step done');
    }
  };
  const outcome = await withWarehouse(o.warehouseDir, async (wh): Promise<RunOutcome> => {
    const status = (live = new LiveStatus(wh.dir, o.pipeline.name, now));
    const seen: RunOptions = {
      ...o,
      onProgress: (e) => {
        status.event(e);
        o.onProgress?.(e);
      },
      onRunId: (id) => {
        status.runId(id);
        o.onRunId?.(id);
      },
    };
    const indexOn = await wh.sibling();
    try {
      const ingest = await timed('ingest', () => ingestStep(seen, wh, indexOn, now, sleep));
      const { ctx } = ingest;
      const collected = (await ctx.store.countsByEndpoint()).some((r) => r.collected > 0);
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
      if (ingest.embedded && interrupted) ctx.note("clusters not built: interrupted; 'pipeline models cluster' builds them");
      const clusters = ingest.embedded && !interrupted ? await timed('clusters', () => clustersStep(ctx, ingest.plan.tasks)) : undefined;
      const models =
        o.models !== false && collected
          ? await timed('models', async () => {
              await handBack();
              return modelsStep(ctx);
            })
          : undefined;
      // Alerts speak only of data whose models are built and tested; they are published with the rest.
      const alerts =
        o.pipeline.alerts && o.alerts !== false
          ? await timed('alerts', () =>
              alertStep({
                wh,
                pipeline: o.pipeline,
                runId: ctx.runId,
                runState: ingest.state,
                stopReason: ingest.stop?.reason ?? null,
                estimateCny: ingest.estimateCny,
                now,
                logger: o.logger,
                dispatcher: o.dispatcher,
                env: o.env,
              }),
            )
          : undefined;
      await wh.flushIndex();
      const published = await timed('publish', async () => {
        await handBack();
        return publishStep(wh, now);
      });
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
      // The night's rows go into the database file last (CHECKPOINT_THRESHOLD: once a run), with
      // everything handed back first: the checkpoint reads the rows back from DuckDB's temp folder
      // as it writes them, and would otherwise run on top of all of them (and of the steps'
      // garbage). Should it fail (durability does not need it: the rows are in the log), the
      // close checkpoints instead.
      await timed('checkpoint', async () => {
        await handBack();
        await wh
          .checkpoint()
          .catch((err: unknown) =>
            o.logger.warn({ err: (err as Error).message }, 'checkpoint before closing the warehouse failed; the close checkpoints instead'),
          );
      });
      return {
        ...summary,
        resumed: ingest.resumed,
        ...(models ? { models } : {}),
        ...(clusters ? { clusters } : {}),
        ...(alerts ? { alerts } : {}),
        published,
        stepsMs,
        stepsPeakMb,
      };
    } finally {
      // Rows still deferred: committed now (the next run's reindex would rebuild them otherwise).
      await wh
        .flushIndex()
        .catch((err: unknown) =>
          o.logger.warn(
            { err: (err as Error).message },
            'deferred raw index rows not committed; the next run rebuilds them from the raw files',
          ),
        );
      indexOn.close();
      status.end();
      live = undefined;
    }
  });
  if (!o.lake) return outcome;
  const lake = await timed('lake', () => lakeStep(o.warehouseDir, o.lake!, env));
  return { ...outcome, lake, stepsMs, stepsPeakMb };
}

/**
 * A scheduled night: a tick that only finished an earlier unfinished run still owes tonight's
 * data, so a new run follows it. The same sequence as `pipeline run`, twice at most.
 */
export async function runScheduledNight(o: RunOptions): Promise<RunOutcome> {
  const first = await runPipeline(o);
  if (!first.resumed || o.signal?.aborted) return first;
  o.logger.info({ pipeline: o.pipeline.name, runId: first.runId, state: first.state }, "finished an earlier run; starting tonight's");
  return runPipeline({ ...o, newRun: true });
}
