import { alertStep, type AlertOutcome } from '../alerts/index.js';
import { collectGarbage, type RunStep, type RunStore, type StepRecord, type Warehouse } from '../warehouse/index.js';
import { ingestStep, type IngestOutcome } from './ingest-step.js';
import { killPoint } from './kill-point.js';
import { lakeStep, lakeSynced } from './lake-step.js';
import { clustersStep, modelsStep, type ClustersOutcome, type ModelsOutcome } from './models-step.js';
import { publishStep, type PublishedSummary } from './publish-step.js';
import type { RunOptions } from './run-options.js';
import type { Step, StepHooks } from './step-runner.js';
import { summarize, type RunSummary } from './summary.js';

type Logger = RunOptions['logger'];

/** One run's context as its steps go: what it was started with, and what each step left. */
export interface RunCtx {
  o: RunOptions;
  wh: Warehouse;
  indexOn: Warehouse;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  /** Runs this invocation finished (or tried to): not taken again. */
  tried: ReadonlySet<string>;
  log: () => Logger;
  /** Set by the ingest, the first step; the journal and what was collected read right after it. */
  ingest?: IngestOutcome;
  journal?: Map<RunStep, StepRecord>;
  collected?: boolean;
  clusters?: ClustersOutcome[];
  models?: ModelsOutcome;
  alerts?: AlertOutcome;
  published?: PublishedSummary;
  summary?: RunSummary;
  lake?: Awaited<ReturnType<typeof lakeStep>>;
}

const ingestOf = (c: RunCtx): IngestOutcome => c.ingest!;
const storeOf = (c: RunCtx): RunStore => c.ingest!.ctx.store;
/** After Ctrl-C no paid label call is made: `pipeline models cluster` (or the next run) builds the clusters. */
const interrupted = (c: RunCtx) => c.o.signal?.aborted === true;
/** The lake a run syncs to: this invocation's, else the one it was started with (its journal keeps it). */
const lakeUrl = (c: RunCtx) => c.o.lake ?? c.journal?.get('lake')?.detail ?? undefined;

/**
 * The steps of one run, in order. Clusters come before the models: their label calls are
 * charged, and the spend mart the models build (and the run publishes) counts every charge of
 * the run; they read no model. Alerts speak only of data whose models are built and tested.
 * The summary is read back from the warehouse at every invocation (it is what is printed); the
 * journal records it once. The night's rows go into the database file last (CHECKPOINT_THRESHOLD:
 * once a run), with everything handed back first: the checkpoint reads the rows back from
 * DuckDB's temp folder as it writes them. Should it fail (durability does not need it: the rows
 * are in the log), the close checkpoints instead. The lake is mirrored while the warehouse is
 * held, so nothing rewrites parquet/ under the upload; it is done only when every file is up.
 */
export const RUN_STEPS_LIST: readonly Step<RunCtx>[] = [
  {
    name: 'ingest',
    journal: 'self',
    when: () => true,
    run: async (c) => {
      c.ingest = await ingestStep(c.o, c.wh, c.indexOn, c.now, c.sleep, c.tried);
    },
  },
  { name: 'journal', journal: 'none', when: () => true, run: readJournal },
  {
    name: 'clusters',
    when: (c) => (!ingestOf(c).embedded ? 'no embeddings job ran' : !interrupted(c)),
    run: async (c) => {
      c.clusters = await clustersStep(ingestOf(c).ctx, ingestOf(c).plan.tasks);
    },
  },
  {
    name: 'models',
    handBack: true,
    when: (c) => (c.o.models !== false && c.collected ? true : c.o.models === false ? '--no-models' : 'nothing collected'),
    run: async (c) => {
      c.models = await modelsStep(ingestOf(c).ctx);
    },
  },
  {
    name: 'alerts',
    when: (c) =>
      c.o.pipeline.alerts !== undefined && c.o.alerts !== false ? true : c.o.pipeline.alerts ? 'turned off' : 'no alerts: block',
    run: async (c) => {
      c.alerts = await alerts(c);
    },
  },
  { name: 'flush-index', journal: 'none', when: () => true, run: (c) => c.wh.flushIndex() },
  {
    name: 'publish',
    handBack: true,
    when: () => true,
    run: async (c) => {
      c.published = await publishStep(c.wh, c.now);
    },
  },
  { name: 'summary', always: true, when: () => true, run: summary },
  {
    name: 'checkpoint',
    handBack: true,
    when: () => true,
    run: async (c) => {
      killPoint('checkpoint', 'middle');
      await c.wh
        .checkpoint()
        .catch((err: unknown) =>
          c.log().warn({ err: (err as Error).message }, 'checkpoint before closing the warehouse failed; the close checkpoints instead'),
        );
    },
  },
  {
    name: 'lake',
    when: (c) => (lakeUrl(c) ? true : 'no lake'),
    detail: (c) => lakeUrl(c)!,
    done: (c) => c.lake !== undefined && lakeSynced(c.lake),
    run: async (c) => {
      c.lake = await lakeStep(c.o.warehouseDir, lakeUrl(c)!, c.o.env ?? process.env);
    },
  },
];

/** What the run's journal holds (a run resumed to finish its steps does only those it owes), and whether it collected anything. */
async function readJournal(c: RunCtx): Promise<void> {
  const store = storeOf(c);
  c.journal = await store.steps();
  c.collected = (await store.countsByEndpoint()).some((r) => r.collected > 0);
  if (ingestOf(c).embedded && interrupted(c) && owes(c, 'clusters'))
    ingestOf(c).ctx.note("clusters not built: interrupted; 'pipeline models cluster' builds them");
}

function owes(c: RunCtx, step: string): boolean {
  return !(c.journal?.get(step as RunStep)?.done ?? false);
}

function alerts(c: RunCtx): Promise<AlertOutcome> {
  const ingest = ingestOf(c);
  return alertStep({
    wh: c.wh,
    pipeline: c.o.pipeline,
    runId: ingest.ctx.runId,
    runState: ingest.state,
    stopReason: ingest.stop?.reason ?? null,
    estimateCny: ingest.estimateCny,
    now: c.now,
    logger: c.log(),
    dispatcher: c.o.dispatcher,
    env: c.o.env,
    afterBuild: () => killPoint('alerts', 'middle'),
  });
}

async function summary(c: RunCtx): Promise<void> {
  const ingest = ingestOf(c);
  c.summary = await summarize(c.wh, {
    runId: ingest.ctx.runId,
    pipeline: c.o.pipeline.name,
    state: ingest.state,
    stopReason: ingest.stop?.reason ?? null,
    stopKind: ingest.stop?.kind ?? null,
    started: ingest.started,
    finished: c.now(),
    warehouseDir: c.wh.dir,
  });
  if (owes(c, 'summary')) killPoint('summary', 'middle');
}

/**
 * What DuckDB must hold, and what the JavaScript heap must use, for a step to hand it back first
 * (128 MiB each). Below that there is little to gain, and the hand-back costs more than it saves:
 * a small night's DuckDB holds about 100 MB (a block per column of each table the night appended
 * to, uncheckpointed), and once evicted the steps after read it back from the temp folder.
 * pipelines/keywords.yaml against the sandbox (40 tasks, models off), five nights in one
 * process: 1.33 s a night with every hand-back, 1.05 s without (1.6 and 1.23 s of CPU). A large
 * night holds hundreds of MB in each (a 100,000-item night's loads 100 to 165 MB of DuckDB's, and a
 * year's cached blocks 40 to 100 more: docs/performance.md), and still hands them back.
 */
export const HAND_BACK_DUCKDB_BYTES = 128 * 2 ** 20;
export const HAND_BACK_HEAP_BYTES = 128 * 2 ** 20;

/** The journal and memory of a run for the step runner: steps recorded in `run_steps` as they start and end. */
export function runHooks(time: StepHooks<RunCtx>['time']): StepHooks<RunCtx> {
  return {
    owes,
    started: (c, step, detail) => storeOf(c).stepStarted(step as RunStep, c.now(), detail),
    done: (c, step, detail) => storeOf(c).stepDone(step as RunStep, c.now(), detail ?? null),
    time,
    // Each later step starts without what the one before left in memory: in DuckDB's (the
    // night's uncheckpointed rows, a year's cached blocks: Warehouse.releaseMemory) and in the
    // JavaScript heap (collectGarbage); not what a small night leaves (HAND_BACK_DUCKDB_BYTES).
    handBack: async (c) => {
      await c.wh.releaseMemory({ unlessBelow: HAND_BACK_DUCKDB_BYTES });
      if (process.memoryUsage().heapUsed >= HAND_BACK_HEAP_BYTES) collectGarbage();
    },
  };
}
