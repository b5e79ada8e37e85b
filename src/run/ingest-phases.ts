import { PushCollector, refetchFixed } from '../collect/index.js';
import { isInterrupted } from '../errors.js';
import { fromMicros, lostChargesNote, postAll, resolveUnknown, toMicros } from '../post/index.js';
import { packBatches } from '../plan/index.js';
import { compactRaw, damagedNotes, ledgerWriter, recordTrackedDomains, runQueries, type Warehouse } from '../warehouse/index.js';
import { collectStep, settleLiveTasks } from './collect-step.js';
import type { RunContext, Stop } from './context.js';
import { embedJobs } from './embed-jobs.js';
import { escalateStep } from './escalate-step.js';
import type { IngestRun } from './ingest-step.js';
import { killPoint } from './kill-point.js';
import type { Step } from './step-runner.js';

/**
 * The phases of a run's ingest, in order, once the run is open: a resumed run collects what it
 * posted and looks up what it does not know first; then the plan's unsent tasks are posted
 * (unless something already stopped the run), everything posted is collected (whatever stopped
 * the posting: what was posted is paid for), the series of `depth: auto` jobs whose tracked
 * domain was not within tonight's depth are bought again at full depth, the embeddings are made, and the run's end is
 * checked. Not journaled: the ingest records itself when the run finishes (RunStore.finishRun).
 */
export const INGEST_PHASES: readonly Step<IngestRun>[] = [
  {
    name: 'tracked-domains',
    journal: 'none',
    when: () => true,
    run: async (r) => {
      await recordTrackedDomains(r.ctx.wh, r.o.pipeline, r.ctx.runId, r.started);
    },
  },
  { name: 'resume-collect', journal: 'none', when: (r) => r.resume !== undefined, run: resumeCollect },
  { name: 'plan', journal: 'none', when: () => true, run: planToPost },
  { name: 'post', journal: 'none', when: (r) => r.stop === null, run: post },
  {
    name: 'collect',
    journal: 'none',
    when: () => true,
    run: async (r) => {
      const pulled = await collectStep(r.ctx, {});
      r.stop ??= pulled.stop;
    },
  },
  { name: 'escalate', journal: 'none', when: (r) => r.stop === null && r.plan.tasks.some((t) => t.auto), run: escalateStep },
  { name: 'embed', journal: 'none', when: (r) => r.stop === null, run: embed },
  { name: 'end-checks', journal: 'none', when: () => true, run: endChecks },
];

/** A resumed run: what it posted is collected first, tasks of unknown outcome are looked up by tag. */
async function resumeCollect(r: IngestRun): Promise<void> {
  const { ctx, o } = r;
  const { wh, client, store, runId, now, note, log } = ctx;
  const first = await collectStep(ctx, { sweep: true });
  r.stop = first.stop;
  const settled = await resolveUnknown({ wh, client, store, runId, now, sleep: o.sleep });
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

/** The plan's tasks not yet sent, packed into POSTs, and what the run says of its plan. */
async function planToPost(r: IngestRun): Promise<void> {
  const { plan, readings } = r;
  const { store, log, note } = r.ctx;
  const states = await store.taskStates();
  const toPost = plan.tasks.filter((t) => !states.has(t.tag) || states.get(t.tag) === 'unsent');
  log.info({ tasks: plan.tasks.length, toPost: toPost.length, duplicatesDropped: plan.duplicatesDropped }, 'planned');
  await store.recordPlanSize(plan.tasks.length);
  r.batches = packBatches(toPost, readings.tasksPerPost);
  for (const n of readings.notes) note(n);
  if (r.readingsProblem) {
    note(r.readingsProblem);
    log.warn(r.readingsProblem);
  }
  if (readings.old) log.warn({ probedAt: readings.probedAt, ageDays: readings.ageDays }, 'the recorded service readings are old');
  note(
    `planned ${plan.tasks.length} tasks${plan.duplicatesDropped ? ` (${plan.duplicatesDropped} repeats dropped)` : ''}; ${toPost.length} to post in ${r.batches.length} POST(s)`,
  );
  r.toPost = toPost.map((t) => t.tag);
}

/** Posts the batches, with push collection started first when the pipeline collects by callback. */
async function post(r: IngestRun): Promise<void> {
  const { ctx, o, collection, batches } = r;
  const { store, log, note, wh, runId, now } = ctx;
  await store.forgetUnsent(r.toPost);
  if (collection.mode === 'push' && batches.some((b) => b.endpoint.mode === 'task_post')) {
    const onIgnored = (taskId: string, ignored: readonly string[]) =>
      log.warn({ taskId, ignored }, 'a postback body held other tasks: only the task its URL names was landed, the others were dropped');
    const landing = o.callbackLanding;
    ctx.push = await PushCollector.start({
      ...collection,
      wh,
      runId,
      pipeline: o.pipeline.name,
      now,
      secret: o.callbackSecret,
      onIgnored,
      ...(landing ? { landing } : {}),
    });
    note(`push collection: callbacks to ${ctx.push.baseUrl} (${collection.callback}); what does not arrive is recovered or pulled`);
  }
  r.stop = await postAll(ctx, batches);
  killPoint('ingest', 'middle');
  // Tasks the rate limit still refused (40202) after the client's attempts were not created: the
  // run ends partial, and the next run posts them (never recorded failed, never bought twice).
  const limited = [...(await store.taskStates()).values()].filter((s) => s === 'unsent').length;
  if (!r.stop && limited > 0)
    r.stop = {
      kind: 'unavailable',
      reason: `${limited} task(s) were still refused for the rate limit (40202) after every attempt: not created, not charged; run again to post them`,
    };
}

/** Embeddings of the pipeline's keywords come last: they need no task, only the keywords. */
async function embed(r: IngestRun): Promise<void> {
  try {
    r.embedded = await embedJobs(r.ctx, r.plan.tasks);
  } catch (err) {
    // Ctrl-C while an embeddings call waited for the rate limit (or before it): it was not sent.
    if (!isInterrupted(err)) throw err;
    r.stop = {
      kind: 'interrupted',
      reason: 'interrupted before the embeddings were all made (those made are kept); run again to make the rest',
    };
  }
}

/** What the run leaves unresolved, lost or repriced, its balance refunds, and the raw landing compacted. */
async function endChecks(r: IngestRun): Promise<void> {
  const { ctx } = r;
  const { wh, store } = ctx;
  const unresolved = (await store.openTasks()).length;
  if (!r.stop && unresolved > 0) {
    r.stop = {
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
  r.stop ??= await lostTasksStop(wh, ctx.runId);
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
}

/** How many lost tasks the reason names by tag and keyword; the rest are counted. */
const LOST_SHOWN = 5;

/**
 * The run's tasks the service said it does not know (40401 Task Not Found) after they were
 * posted, in this invocation or an earlier one of the run, as a stop: their results are lost
 * for good. Undefined when there are none.
 */
async function lostTasksStop(wh: Warehouse, runId: string): Promise<Stop | null> {
  const rows = await runQueries.lostTasks(wh, runId);
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
  // Damaged files found by the compactions during collection (load-batcher.ts) left their tasks in
  // task_refetches too: fetched again here with these.
  const pending = compacted.damaged.some((d) => d.refetch.length > 0) || (await runQueries.damagedRefetchesPending(wh, ctx.runId)) > 0;
  if (!pending || ctx.o.signal?.aborted) return;
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
