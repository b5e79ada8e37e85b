import PQueue from 'p-queue';
import { rereadNote } from '../collect/index.js';
import { EtlError, errorRule } from '../errors.js';
import type { PlannedBatch, PlannedTask } from '../plan/index.js';
import type { PostedTaskRow } from '../warehouse/index.js';
import { overBudget, probeFirst } from './budget-guard.js';
import type { PostContext, PostStop } from './context.js';
import { LIVE_CONCURRENCY, loadLiveTasks, postedRows } from './live-calls.js';
import { lookUpAfter5xx } from './post-retry.js';

/**
 * What one POST did: `created` (the service answered; each task posted or refused on its
 * own line), `refused` (nothing was created: no connection, 401, 402, repeated 429; safe to
 * post again) or `unknown` (sent, no answer: looked up by tag, never posted blindly).
 */
export type BatchOutcome = { kind: 'created'; rows: PostedTaskRow[] } | FailedPost;

/** A POST that did not return an envelope; `tags`: the tasks it carried, when not the whole batch. */
export type FailedPost = { kind: 'refused' | 'unknown'; error: EtlError; tags?: readonly string[] };

/** Classifies a failed POST by its code's rule (errors.ts); anything that is not an `EtlError` is a bug and rethrown. */
export function failedOutcome(err: unknown): FailedPost {
  if (!(err instanceof EtlError)) throw err;
  return { kind: errorRule(err.code).post, error: err };
}

/**
 * The policy for a failed POST: a refused key or an invalid request ends the run (thrown);
 * otherwise posting stops with the kind the CLI maps to an exit code. Pure.
 */
export function stopFor(outcome: FailedPost): PostStop {
  const { error } = outcome;
  const stop = errorRule(error.code).stop;
  if (stop === 'end') throw error;
  if (stop === 'interrupted') return { kind: 'interrupted', reason: `${error.message} Run again to resume.` };
  return { kind: stop ?? (outcome.kind === 'refused' ? 'unavailable' : 'unknown'), reason: error.message };
}

/**
 * POSTs of `task_post` batches in flight at once, so that the tasks-table writes and the landing
 * of each answer do not leave the family's rate-limit window unused (docs/performance.md). With a
 * budget they go one at a time: each batch is then priced by what the ones before it were charged.
 */
const POSTS_IN_FLIGHT = 8;

/**
 * Posts batches in order, a few `task_post` POSTs at once (a p-queue bounds them); live calls
 * go a few at a time and alone. A budget, a 402, an abort or a POST with no answer stops
 * posting (returned, so what was posted is still collected; POSTs already in flight finish);
 * a refused key ends the run.
 */
export async function postAll(c: PostContext, batches: readonly PlannedBatch[]): Promise<PostStop | null> {
  let liveDone = 0;
  let stop: PostStop | null = null;
  let fatal: { err: unknown } | undefined;
  const queue = new PQueue({ concurrency: c.o.pipeline.budget_cny === undefined ? POSTS_IN_FLIGHT : 1 });
  const slotFree = () => (queue.pending < queue.concurrency ? Promise.resolve() : new Promise<void>((r) => queue.once('next', () => r())));
  // Batches as they go: one may be split in two to price it (probeFirst).
  const work = [...batches];
  for (let i = 0; i < work.length && !stop && !fatal;) {
    const first = work[i]!;
    if (c.o.signal?.aborted) {
      stop = { kind: 'interrupted', reason: `interrupted before batch ${first.no} of ${batches.length}; run again to resume` };
      break;
    }
    if (first.endpoint.mode === 'live') {
      await queue.onIdle();
      if (stop || fatal) break;
      const { split, alone } = await probeFirst(c, first);
      if (split.length > 1) {
        work.splice(i, 1, ...split);
        continue;
      }
      const r = await postLiveGroup(c, work, i, alone, batches.length, liveDone);
      if ('stop' in r) return r.stop;
      ({ i, liveDone } = r);
      continue;
    }
    await slotFree();
    if (stop || fatal) break;
    const { split } = await probeFirst(c, first);
    if (split.length > 1) {
      work.splice(i, 1, ...split);
      continue;
    }
    const over = await overBudget(c, [first]);
    if (over && over.tasks > 0 && over.tasks < first.tasks.length) {
      // Buys what fits within the budget, then stops at the rest.
      c.note(
        `budget_cny: ${over.tasks} of the ${first.tasks.length} tasks of batch ${first.no} fit within it; buying those, then stopping`,
      );
      work.splice(i, 1, { ...first, tasks: first.tasks.slice(0, over.tasks) }, { ...first, tasks: first.tasks.slice(over.tasks) });
      continue;
    }
    if (over) {
      stop = { kind: 'budget', reason: over.reason };
      break;
    }
    i++;
    const rest = work.slice(i);
    // Never rejects: a failure is kept in `stop` or `fatal`, and no new POST starts after it.
    void queue.add(async () => {
      try {
        const outcome = await postBatch(c, first);
        if (outcome.kind === 'created') c.note(`posted batch ${first.no}/${batches.length} (${tasksOf(first, batches)})`);
        else {
          // Every failed POST's tasks are recorded (with its call id), not only the first's.
          const failed = await recordFailed(c, first, outcome);
          stop ??= failed;
        }
        await c.postingLine(rest);
      } catch (err) {
        fatal ??= { err };
      }
    });
  }
  await queue.onIdle();
  if (fatal) throw fatal.err;
  return stop;
}

/**
 * Posts the live calls that start at `work[i]`: as many at once as go together (one alone when
 * nothing prices it), cut to what fits within the budget. Returns where posting goes on and how
 * many live calls are done, or why it stops.
 */
async function postLiveGroup(
  c: PostContext,
  work: readonly PlannedBatch[],
  i: number,
  alone: boolean,
  batches: number,
  liveDone: number,
): Promise<{ i: number; liveDone: number } | { stop: PostStop }> {
  const group: PlannedBatch[] = [work[i]!];
  // A call of an endpoint with no price yet goes alone: its charge prices the next ones.
  while (!alone && group.length < LIVE_CONCURRENCY && work[i + group.length]?.endpoint.mode === 'live') group.push(work[i + group.length]!);
  const over = await overBudget(c, group);
  if (over) {
    // The calls that fit within the budget go; the next group stops there.
    let fit = over.tasks;
    const k = group.findIndex((b) => (fit -= b.tasks.length) < 0);
    if (k <= 0) return { stop: { kind: 'budget', reason: over.reason } };
    group.splice(k);
  }
  i += group.length;
  const liveStop = await postLive(c, group);
  liveDone += group.length;
  if (liveStop) return { stop: liveStop };
  const last = i === work.length || work[i]!.endpoint.mode !== 'live';
  if (last || liveDone % (LIVE_CONCURRENCY * 25) === 0)
    c.note(`live calls: ${liveDone} answered and loaded (through batch ${group.at(-1)!.no}/${batches})`);
  await c.postingLine(work.slice(i));
  return { i, liveDone };
}

/** A POST's tasks, as part of its batch when the batch went in parts (one task alone to price it, or what fitted a budget). */
function tasksOf(sent: PlannedBatch, batches: readonly PlannedBatch[]): string {
  const n = sent.tasks.length;
  const whole = batches.find((b) => b.no === sent.no)?.tasks.length ?? n;
  return n === whole ? `${n} task${n === 1 ? '' : 's'}` : `${n} of its ${whole} tasks`;
}

/** Records a failed POST's tasks (refused: `unsent`; anything else: `unknown`) and says why posting stops. */
async function recordFailed(c: PostContext, batch: PlannedBatch, outcome: FailedPost): Promise<PostStop> {
  const tags = outcome.tags ?? batch.tasks.map((t) => t.tag);
  if (outcome.kind === 'refused') await c.store.recordUnsent(tags, outcome.error.message);
  // Its tasks already name the POST sent (recordSending, before it went).
  else await c.store.recordUnknown(tags, outcome.error.message);
  return stopFor(outcome);
}

/**
 * Posts one `task_post` batch: its tasks are recorded `planned` with their tags first, then
 * the service's answer per task. A POST larger than the endpoint takes (40006 for the tasks
 * past its limit, not charged) is sent again in smaller POSTs, and the size is kept for the
 * rest of the run (post-retry.ts). A POST of one task refused with 40006 is final: that task
 * failed with the code (the endpoint takes none), never sent again. Returns the outcome instead of throwing.
 */
async function postBatch(c: PostContext, batch: PlannedBatch): Promise<BatchOutcome> {
  await c.store.recordPlanned(
    batch.tasks.map((t) => ({
      tag: t.tag,
      job: t.job,
      endpointId: t.endpoint.id,
      batchNo: batch.no,
      spec: t.spec,
      depthReason: t.depthReason ?? null,
    })),
    c.now(),
  );
  const rows: PostedTaskRow[] = [];
  let todo: readonly PlannedTask[] = batch.tasks;
  while (todo.length > 0) {
    const size = c.postSizes.get(batch.endpoint.id) ?? todo.length;
    const chunk = todo.slice(0, size);
    const outcome = await postChunk(c, batch, chunk);
    if (outcome.kind !== 'created') {
      // POSTs of this batch not sent yet created nothing: they are posted again by the next run.
      const rest = todo.slice(size).map((t) => t.tag);
      if (rest.length > 0) await c.store.recordUnsent(rest, `not sent: an earlier POST of its batch failed (${outcome.error.code})`);
      return { ...outcome, tags: chunk.map((t) => t.tag) };
    }
    if (chunk.length === 1 && outcome.rows.some((r) => r.statusCode === TOO_MANY_TASKS)) {
      // 40006 for a POST of one task: the endpoint takes none, not fewer. Posting it again would
      // loop; the task failed with the service's code (not created, not charged), and the rest go on.
      const failed = outcome.rows.map((r) =>
        r.statusCode === TOO_MANY_TASKS ? { ...r, message: `${r.message} (refused alone in its POST: not created, not charged)` } : r,
      );
      await c.store.recordPosted(
        failed.filter((r) => r.statusCode === TOO_MANY_TASKS),
        c.now(),
      );
      rows.push(...failed);
      c.note(`${batch.endpoint.path} refused a POST of one task with 40006 (too many tasks in one POST): task ${chunk[0]!.tag} failed`);
      todo = todo.slice(size);
      continue;
    }
    const refused = new Set(outcome.rows.filter((r) => r.statusCode === TOO_MANY_TASKS).map((r) => r.tag));
    const done = outcome.rows.filter((r) => !refused.has(r.tag));
    rows.push(...done);
    if (refused.size > 0) {
      // 40006: this endpoint takes fewer tasks a POST than sent. Those refused were not created
      // or charged; they stay `planned` and go again, with every later POST, at the size that passed.
      const fits = Math.max(1, Math.min(done.length || Math.floor(chunk.length / 2), chunk.length - 1));
      c.postSizes.set(batch.endpoint.id, Math.min(fits, c.postSizes.get(batch.endpoint.id) ?? fits));
      c.note(
        `${batch.endpoint.path} refused ${refused.size} of ${chunk.length} tasks with 40006 (too many tasks in one POST); posting ${c.postSizes.get(batch.endpoint.id)} a POST for the rest of the run`,
      );
    }
    todo = [...chunk.filter((t) => refused.has(t.tag)), ...todo.slice(size)];
  }
  return { kind: 'created', rows };
}

/** The task code of a POST with more tasks than the endpoint takes (not charged). */
const TOO_MANY_TASKS = 40006;

/**
 * One POST of planned tasks and the record of what it created. A POST answered with a 5xx
 * may have created its tasks: they are looked up by tag before anything is sent again
 * (post-retry.ts), and only those the service does not have are posted again.
 */
async function postChunk(c: PostContext, batch: PlannedBatch, tasks: readonly PlannedTask[]): Promise<BatchOutcome> {
  // Callback URLs are added here, not planned: they hold this process's secret, and the tag must not.
  const callbacks = c.push?.callbackFields(batch.endpoint) ?? {};
  let todo = tasks;
  const rows: PostedTaskRow[] = [];
  for (let n = 1; ; n++) {
    const tags = todo.map((t) => t.tag);
    c.push?.sending(
      batch.endpoint,
      tags,
      todo.map((t) => t.spec),
    );
    let call;
    try {
      call = await c.client.call(batch.endpoint, { tasks: todo.map((t) => ({ ...t.spec, ...callbacks })) });
    } catch (err) {
      const outcome = failedOutcome(err);
      const looked = await lookUpAfter5xx(c, batch.endpoint, todo, outcome, n);
      if (!looked) {
        c.push?.abandoned(tags);
        return outcome;
      }
      c.push?.answered(tags, looked.found);
      await c.store.recordPosted(looked.found, c.now());
      c.push?.recorded(looked.found.map((r) => r.taskId));
      rows.push(...looked.found);
      todo = todo.filter((t) => looked.missing.has(t.tag));
      if (todo.length === 0) return { kind: 'created', rows };
      continue;
    }
    const posted = postedRows(batch, call).filter((r) => r.statusCode !== TOO_MANY_TASKS);
    c.push?.answered(tags, posted);
    await c.store.recordPosted(posted, c.now());
    c.push?.recorded(posted.map((r) => r.taskId));
    // Refused for size: left `planned`, for postBatch to send again in smaller POSTs.
    const refused = postedRows(batch, call).filter((r) => r.statusCode === TOO_MANY_TASKS);
    return { kind: 'created', rows: [...rows, ...posted, ...refused] };
  }
}

/**
 * A few live calls at once. Their tasks are recorded with their tags first; each answer is
 * landed by the client before anything reads it; then every answered task's rows and its
 * collected mark commit together. A failed call stops posting after the others are loaded.
 */
async function postLive(c: PostContext, group: PlannedBatch[]): Promise<PostStop | null> {
  await c.store.recordPlanned(
    group.flatMap((b) =>
      b.tasks.map((t) => ({
        tag: t.tag,
        job: t.job,
        endpointId: t.endpoint.id,
        batchNo: b.no,
        spec: t.spec,
        depthReason: t.depthReason ?? null,
      })),
    ),
    c.now(),
  );
  const answers = await Promise.allSettled(group.map((b) => c.client.call(b.endpoint, { tasks: b.tasks.map((t) => t.spec) })));
  const ok: string[] = [];
  let stop: PostStop | null = null;
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
      // Every failed call's task is recorded (with its call id), not only the first's.
      const failed = await recordFailed(c, batch, failedOutcome(answer.reason));
      stop ??= failed;
    } catch (err) {
      fatal ??= err;
    }
  }
  // A task whose answer did not load stays posted: the run's settleLiveTasks marks it failed, with why.
  const loaded = await loadLiveTasks(c.wh, c.store, ok, c.now());
  if (loaded.rereadPlain.length > 0) c.note(rereadNote(loaded.rereadPlain));
  if (fatal !== undefined) throw fatal;
  return stop;
}
