import { randomBytes } from 'node:crypto';
import { PushCollector, refetchFixed } from '../collect/index.js';
import { validateTasks } from '../client/index.js';
import { resolveCollection } from '../config/index.js';
import { EtlError, isInterrupted } from '../errors.js';
import { embeddingJobs } from '../jobs/index.js';
import { packBatches, planPipeline, pullNightTooLong, readingsInUse, type Plan, type ReadingsInUse } from '../plan/index.js';
import {
  compactRaw,
  damagedNotes,
  ledgerWriter,
  readServiceReadings,
  recordTrackedDomains,
  RUN_STEPS,
  runFinishedSql,
  RunStore,
  type Warehouse,
} from '../warehouse/index.js';
import { killPoint } from './kill-point.js';
import { preflightJobs } from './preflight.js';
import { collectStep, settleLiveTasks } from './collect-step.js';
import { makeContext, type RunContext, type RunWorld, type Stop } from './context.js';
import { embedJobs } from './embed-jobs.js';
import { planEstimateCny } from './estimate.js';
import { postAll } from './post-step.js';
import { lostChargesNote, resolveUnknown } from './resolve-unknown.js';
import type { RunOptions } from './run-options.js';
import { fromMicros, toMicros } from './money.js';
import { settleStep } from './settle-step.js';

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

/** How long after its start an unfinished run is resumed by the next `pipeline run`, rather than settled: half a day. */
export const RESUME_WITHIN_MS = 12 * 3_600_000;

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
  const started = now();
  // Runs this invocation already finished (or tried to: a lake still down) are not taken again.
  const unfinished = (await RunStore.unfinishedRuns(wh, o.pipeline.name)).filter((r) => !tried.has(r.runId));
  // A run that bought and loaded everything but owes later steps (clusters, models, alerts,
  // publish, summary, checkpoint, lake) is finished first, whatever its age and even with
  // --new-run: its steps are done, nothing is bought for them (runPipeline then goes on to
  // tonight's run when that one is another night's, or --new-run asked for one).
  const owed = unfinished.find((r) => r.state === 'completed');
  // Otherwise only a run of this night is resumed (started less than RESUME_WITHIN_MS ago); an
  // older one is settled below and tonight's run starts. Before, a nightly `pipeline run` (cron)
  // after one that stopped early only ever resumed it: stopped at its budget, every later night
  // bought nothing and exited 4.
  const latest = unfinished.at(-1);
  const resume = owed ?? (o.newRun || !latest || started.getTime() - latest.startedAt.getTime() > RESUME_WITHIN_MS ? undefined : latest);
  const runId = resume?.runId ?? newRunId(started);
  o.onRunId?.(runId);
  const recorded = await recordedReadings(o, started);
  const { readings } = recorded;
  const plan = planPipeline(o.pipeline, runId, readings.tasksPerPost);
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
    if (tooLong) throw new EtlError('ETL_CONFIG_INVALID', tooLong.message, { retryable: false, context: { stage: 'plan' } });
  }
  const world: RunWorld = { o, wh, indexOn, now, sleep, charged: { micros: 0n }, collection };
  // A completed run owing steps has nothing to collect or look up: it is never settled, and when
  // it is the one resumed, only the steps it owes run (and nothing else is settled meanwhile).
  if (resume?.state !== 'completed')
    for (const old of unfinished) if (old !== resume && old.state !== 'completed') await settleStep(makeContext(world, old.runId), runId);

  const ctx = makeContext(world, runId);
  const estimateCny = await planEstimateCny(wh, plan);
  const { store, log, note } = ctx;
  if (resume?.state === 'completed') {
    const steps = await store.steps();
    // Killed after its loads committed, before its end steps (models, alerts, publish) were
    // done: every task is collected and loaded, so nothing is posted, collected or embedded
    // again, and the run keeps its outcome. The steps after this one finish it.
    const owes = [...RUN_STEPS].filter((s) => s !== 'ingest' && !(steps.get(s)?.done ?? false));
    note(
      `resuming unfinished run ${runId} (started ${resume.startedAt.toISOString()}): its tasks are collected and loaded; finishing the steps it owes (${owes.join(', ')}), buying nothing`,
    );
    log.info({ runId }, 'resuming a completed run whose end steps never finished');
    return {
      ctx,
      plan,
      started,
      resumedStartedAt: resume.startedAt,
      resumed: true,
      state: 'completed',
      stop: null,
      estimateCny,
      embedded: embeddingJobs(o.pipeline.jobs).length > 0,
      readings,
    };
  }
  if (!resume && !o.signal?.aborted) {
    // What the service's reference lists refuse (a model, a location, a lighthouse version)
    // would be refused only after the other tasks were paid for: each job kind's preflight.
    // (A run stopped before it started posts nothing, and asks nothing either.)
    for (const warning of await preflightJobs(ctx.client, o.pipeline, o.file, { wh, now })) log.warn(warning);
  }
  if (resume) {
    await store.reopenRun();
    note(`resuming unfinished run ${runId} (started ${resume.startedAt.toISOString()}): collecting what it posted first`);
  } else {
    // A second run the same day buys every task again: said, not refused (a pipeline may be
    // scheduled twice a day), so that an analyst's repeat by hand is not a silent purchase.
    const earlier = ctx.client.keyKind === 'sandbox' ? undefined : await completedToday(wh, o.pipeline.name, o.pipeline.timezone, started);
    if (earlier) {
      const msg = `a run of ${o.pipeline.name} already completed today (${earlier.runId}, started ${earlier.startedAt}): this run buys its ${plan.tasks.length} tasks again`;
      note(msg);
      log.warn({ earlierRun: earlier.runId }, msg);
    }
    await store.startRun({ file: o.file, baseUrl: o.baseUrl, keyKind: ctx.client.keyKind, at: started });
  }
  await store.recordJobs(o.pipeline.jobs);
  try {
    await recordTrackedDomains(wh, o.pipeline, runId, started);
    let stop: Stop | null = null;
    if (resume) {
      const first = await collectStep(ctx, { sweep: true });
      stop = first.stop;
      const settled = await resolveUnknown({ wh, client: ctx.client, store, runId, now, sleep: o.sleep });
      if (settled.found + settled.notCreated > 0) {
        const charges = settled.found > 0 ? lostChargesNote(settled.estimated, settled.unrecorded) : '';
        note(
          `tasks of unknown outcome: ${settled.found} found by tag (collected, not bought again), ${settled.notCreated} never created (posted now)` +
            (charges ? `. ${charges}` : ''),
        );
      }
      if (settled.error) log.warn(settled.error);
      await settleLiveTasks(ctx);
    }
    const states = await store.taskStates();
    const toPost = plan.tasks.filter((t) => !states.has(t.tag) || states.get(t.tag) === 'unsent');
    log.info({ tasks: plan.tasks.length, toPost: toPost.length, duplicatesDropped: plan.duplicatesDropped }, 'planned');
    await store.recordPlanSize(plan.tasks.length);
    const batches = packBatches(toPost, readings.tasksPerPost);
    for (const n of readings.notes) note(n);
    if (recorded.problem) {
      note(recorded.problem);
      log.warn(recorded.problem);
    }
    if (readings.old) log.warn({ probedAt: readings.probedAt, ageDays: readings.ageDays }, 'the recorded service readings are old');
    note(
      `planned ${plan.tasks.length} tasks${plan.duplicatesDropped ? ` (${plan.duplicatesDropped} repeats dropped)` : ''}; ${toPost.length} to post in ${batches.length} POST(s)`,
    );
    if (!stop) {
      await store.forgetUnsent(toPost.map((t) => t.tag));
      if (collection.mode === 'push' && batches.some((b) => b.endpoint.mode === 'task_post')) {
        const onIgnored = (taskId: string, ignored: readonly string[]) =>
          log.warn(
            { taskId, ignored },
            'a postback body held other tasks: only the task its URL names was landed, the others were dropped',
          );
        ctx.push = await PushCollector.start({
          ...collection,
          wh,
          runId,
          pipeline: o.pipeline.name,
          now,
          secret: o.callbackSecret,
          onIgnored,
        });
        note(`push collection: callbacks to ${ctx.push.baseUrl} (${collection.callback}); what does not arrive is recovered or pulled`);
      }
      stop = await postAll(ctx, batches);
      killPoint('ingest', 'middle');
      // Tasks the rate limit still refused (40202) after the client's attempts were not created: the
      // run ends partial, and the next run posts them (never recorded failed, never bought twice).
      const limited = [...(await store.taskStates()).values()].filter((s) => s === 'unsent').length;
      if (!stop && limited > 0)
        stop = {
          kind: 'unavailable',
          reason: `${limited} task(s) were still refused for the rate limit (40202) after every attempt: not created, not charged; run again to post them`,
        };
    }
    // Always collect, whatever stopped the posting: what was posted is paid for.
    const pulled = await collectStep(ctx, {});
    stop ??= pulled.stop;
    // Embeddings of the pipeline's keywords come last: they need no task, only the keywords.
    let embedded = false;
    if (!stop) {
      try {
        embedded = await embedJobs(ctx, plan.tasks);
      } catch (err) {
        // Ctrl-C while an embeddings call waited for the rate limit (or before it): it was not sent.
        if (!isInterrupted(err)) throw err;
        stop = {
          kind: 'interrupted',
          reason: 'interrupted before the embeddings were all made (those made are kept); run again to make the rest',
        };
      }
    }
    const unresolved = (await store.openTasks()).length;
    if (!stop && unresolved > 0) {
      stop = {
        kind: 'unknown',
        reason: `${unresolved} task(s) were sent but their POST outcome is unknown; they are not re-posted, so nothing is paid twice. They stay in the tasks table with their tags; the next run looks them up.`,
      };
    }
    // A lost POST (of this run or an earlier one) left unpriced for want of a CNY/USD ratio is
    // priced once an answered charge gives one, with its tasks' refunds.
    const repriced = await ledgerWriter.priceLostLater(wh);
    if (repriced.length > 0) {
      const cny = fromMicros(repriced.reduce((s, p) => s + toMicros(p.chargeCny), 0n));
      ctx.note(
        `${repriced.length} lost POST(s) left unpriced are now in the ledger at ${cny} CNY, estimated from id_list's USD cost (charge_estimated)`,
      );
    }
    // Tasks the service answered 40401 (Task Not Found) for: posted (and paid for), their results
    // lost for good. Never a quiet "completed": the run says which, why, and what to do.
    stop ??= await lostTasksStop(wh, runId);
    // Refunds the service showed only in the balance (task costs and charges left gross): the
    // run's balance chain tells them, up to what its own tasks could have been refunded (ledger.ts).
    const balanceBack = (await ledgerWriter.balanceRefunds(wh, [ctx.runId])).get(ctx.runId);
    if (balanceBack !== undefined)
      ctx.note(
        `${balanceBack} CNY came back to the balance for unused depth without showing in the tasks' cost: recorded as refund rows (ledger)`,
      );
    // One segment file per day, kind and run instead of one file per response: loads and
    // replays read a handful of files, and every body stays reachable through the index.
    await compactDamageChecked(ctx);
    const state = stop === null ? 'completed' : 'partial';
    await store.finishRun(state, stop?.reason ?? null, now());
    log.info({ state, stop: stop?.kind }, 'run finished');
    return { ctx, plan, started, resumed: resume !== undefined, state, stop, estimateCny, embedded, readings };
  } catch (err) {
    await store.finishRun('failed', err instanceof Error ? err.message : String(err), now());
    throw err;
  } finally {
    await ctx.push?.close();
  }
}

/** How many lost tasks the reason names by tag and keyword; the rest are counted. */
const LOST_SHOWN = 5;

/**
 * The run's tasks the service said it does not know (40401 Task Not Found) after they were
 * posted, in this invocation or an earlier one of the run, as a stop: their results are lost
 * for good. Undefined when there are none.
 */
async function lostTasksStop(wh: Warehouse, runId: string): Promise<Stop | null> {
  const rows = await wh.all<{ task_id: string; tag: string; keyword: string | null }>(
    `SELECT task_id, tag, json_extract_string(spec, '$.keyword') AS keyword FROM tasks
     WHERE run_id = $1 AND state = 'failed' AND status_code = 40401 ORDER BY task_id`,
    [runId],
  );
  if (rows.length === 0) return null;
  const shown = rows
    .slice(0, LOST_SHOWN)
    .map((r) => `${r.task_id}${r.keyword ? ` (${r.keyword})` : ''}`)
    .join(', ');
  const more = rows.length > LOST_SHOWN ? ` and ${rows.length - LOST_SHOWN} more` : '';
  return {
    kind: 'lost',
    reason:
      `${rows.length} task(s) posted by this run are unknown to the service (40401 Task Not Found): ${shown}${more}. ` +
      'Their results are lost; nothing was loaded for them and they are not posted again by themselves, so nothing is paid twice. ' +
      'The service keeps a task under the key that posted it, at the address it was posted to, for a limited time: if SVC_API_KEY or SVC_BASE_URL changed since they were posted, put them back and check with the service; ' +
      "otherwise 'pipeline run --new-run' buys the night again (the tasks table lists them: state failed, status_code 40401).",
  };
}

/**
 * Compacts the raw landing. A landed file found damaged there is kept apart, not copied into
 * the night's segment (compactRaw), and the run says so; its collected tasks are fetched again
 * now (`task_get`, free: they are never posted again) and the new answers compacted in turn.
 * What cannot be fetched now stays in `task_refetches` for the next collection.
 */
async function compactDamageChecked(ctx: RunContext): Promise<void> {
  const { wh, now } = ctx;
  const compacted = await compactRaw(wh, { at: now() });
  for (const n of damagedNotes(compacted.damaged)) {
    ctx.note(n);
    ctx.log.warn(n);
  }
  if (!compacted.damaged.some((d) => d.refetch.length > 0) || ctx.o.signal?.aborted) return;
  try {
    const r = await refetchFixed({
      client: ctx.client,
      wh,
      runId: ctx.runId,
      postEndpoints: [],
      now,
      ...(ctx.o.signal ? { signal: ctx.o.signal } : {}),
    });
    ctx.note(
      `${r.refetched} task(s) of damaged raw files fetched again and loaded${r.unloaded.length + r.failed > 0 ? `; ${r.unloaded.length + r.failed} not (left for the next run's collection)` : ''}`,
    );
  } catch (err) {
    ctx.log.warn({ err: (err as Error).message }, 'fetching again the tasks of damaged raw files failed; the next run fetches them');
    return;
  }
  const again = await compactRaw(wh, { at: now() });
  for (const n of damagedNotes(again.damaged)) ctx.note(n);
}

/** The latest run of the pipeline with a charged key that completed and finished (every step done, the lake included), started on `at`'s day in `timezone`. */
async function completedToday(
  wh: Warehouse,
  pipeline: string,
  timezone: string,
  at: Date,
): Promise<{ runId: string; startedAt: string } | undefined> {
  const [r] = await wh.all<{ runId: string; startedAt: string }>(
    `SELECT r.run_id AS "runId", strftime(r.started_at AT TIME ZONE $2, '%Y-%m-%d %H:%M') || ' ' || $2 AS "startedAt"
     FROM runs AS r LEFT JOIN publish_runs AS p USING (run_id)
     WHERE r.pipeline = $1 AND r.state = 'completed' AND coalesce(r.key_kind, '') <> 'sandbox' AND ${runFinishedSql('r', 'p')}
       AND (r.started_at AT TIME ZONE $2)::DATE = ($3::TIMESTAMPTZ AT TIME ZONE $2)::DATE
     ORDER BY r.started_at DESC LIMIT 1`,
    [pipeline, timezone, at.toISOString()],
  );
  return r;
}
