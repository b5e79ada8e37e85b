import PQueue from 'p-queue';
import { rereadNote } from '../collect/index.js';
import { extraDepthBlocks, TASK_BLOCKS_SQL, TASK_UNITS_SQL, taskUnits } from '../catalog/index.js';
import { EtlError, errorRule } from '../errors.js';
import { readPriceHistory, type PlannedBatch, type PlannedTask } from '../plan/index.js';
import type { PostedTaskRow } from '../warehouse/index.js';
import { budgetStop, priceUnknown, tasksWithinBudget, type NextPurchase, type Spent } from './budget.js';
import { postingLine, type RunContext, type Stop } from './context.js';
import { LIVE_CONCURRENCY, loadLiveTasks, postedRows } from './live.js';
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
export function stopFor(outcome: FailedPost): Stop {
  const { error } = outcome;
  const stop = errorRule(error.code).stop;
  if (stop === 'end') throw error;
  if (stop === 'interrupted') return { kind: 'interrupted', reason: `${error.message} Run again to resume.` };
  return { kind: stop ?? (outcome.kind === 'refused' ? 'unavailable' : 'unknown'), reason: error.message };
}

/**
 * POSTs of `task_post` batches in flight at once. One at a time, the tasks-table writes and
 * the landing of each answer left most of the family's rate-limit window unused while
 * posting (bench/engine.ts). With a budget they go one at a time: each batch is then priced
 * by what the ones before it were charged.
 */
const POSTS_IN_FLIGHT = 8;

/**
 * Posts batches in order, a few `task_post` POSTs at once (a p-queue bounds them); live calls
 * go a few at a time and alone. A budget, a 402, an abort or a POST with no answer stops
 * posting (returned, so what was posted is still collected; POSTs already in flight finish);
 * a refused key ends the run.
 */
export async function postAll(c: RunContext, batches: readonly PlannedBatch[]): Promise<Stop | null> {
  let liveDone = 0;
  let stop: Stop | null = null;
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
      const group: PlannedBatch[] = [first];
      // A call of an endpoint with no price yet goes alone: its charge prices the next ones.
      while (!alone && group.length < LIVE_CONCURRENCY && work[i + group.length]?.endpoint.mode === 'live')
        group.push(work[i + group.length]!);
      const over = await overBudget(c, group);
      if (over) {
        // The calls that fit within the budget go; the next group stops there.
        let fit = over.tasks;
        const k = group.findIndex((b) => (fit -= b.tasks.length) < 0);
        if (k <= 0) return { kind: 'budget', reason: over.reason };
        group.splice(k);
      }
      i += group.length;
      const liveStop = await postLive(c, group);
      liveDone += group.length;
      if (liveStop) return liveStop;
      const last = i === work.length || work[i]!.endpoint.mode !== 'live';
      if (last || liveDone % (LIVE_CONCURRENCY * 25) === 0)
        c.note(`live calls: ${liveDone} answered and loaded (through batch ${group.at(-1)!.no}/${batches.length})`);
      await postingLine(c, work.slice(i));
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
        await postingLine(c, rest);
      } catch (err) {
        fatal ??= { err };
      }
    });
  }
  await queue.onIdle();
  if (fatal) throw fatal.err;
  return stop;
}

/** A POST's tasks, as part of its batch when the batch went in parts (one task alone to price it, or what fitted a budget). */
function tasksOf(sent: PlannedBatch, batches: readonly PlannedBatch[]): string {
  const n = sent.tasks.length;
  const whole = batches.find((b) => b.no === sent.no)?.tasks.length ?? n;
  return n === whole ? `${n} task${n === 1 ? '' : 's'}` : `${n} of its ${whole} tasks`;
}

/** Records a failed POST's tasks (refused: `unsent`; anything else: `unknown`) and says why posting stops. */
async function recordFailed(c: RunContext, batch: PlannedBatch, outcome: FailedPost): Promise<Stop> {
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
async function postBatch(c: RunContext, batch: PlannedBatch): Promise<BatchOutcome> {
  await c.store.recordPlanned(
    batch.tasks.map((t) => ({ tag: t.tag, job: t.job, endpointId: t.endpoint.id, batchNo: batch.no, spec: t.spec })),
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
async function postChunk(c: RunContext, batch: PlannedBatch, tasks: readonly PlannedTask[]): Promise<BatchOutcome> {
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
async function postLive(c: RunContext, group: PlannedBatch[]): Promise<Stop | null> {
  await c.store.recordPlanned(
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

/**
 * What this run has spent (net of refunds), what it was charged per unit of each endpoint (gross,
 * units from the tasks each call posted), and what earlier runs were charged per unit, for the
 * budget policy.
 */
async function purchases(c: RunContext, group: readonly PlannedBatch[]): Promise<Spent & { next: NextPurchase[] }> {
  // The units each charged call of the run posted, kept as they are found: the specs of a call's
  // tasks are parsed once, not at every batch of a long run.
  await c.wh.run(`CREATE TEMP TABLE IF NOT EXISTS _run_call_units (run_id VARCHAR, call_id VARCHAR, u DOUBLE, t DOUBLE, b DOUBLE)`);
  await c.wh.run(
    `INSERT INTO _run_call_units
     SELECT $1, post_call_id, sum(${TASK_UNITS_SQL})::DOUBLE, count(*)::DOUBLE, sum(${TASK_BLOCKS_SQL})::DOUBLE FROM tasks
     WHERE run_id = $1 AND post_call_id IN (
       SELECT call_id FROM ledger WHERE run_id = $1 AND task_id IS NULL AND charge_cny > 0
       EXCEPT SELECT call_id FROM _run_call_units WHERE run_id = $1)
     GROUP BY post_call_id`,
    [c.runId],
  );
  // Per endpoint: the spend, the gross charges and their units, and over the charged calls the
  // sums a least-squares fit of charge = tasks × base + blocks × block needs.
  const rows = await c.wh.all<{
    e: string;
    spent: number;
    charged: number;
    units: number;
    t: number;
    b: number;
    tt: number;
    tb: number;
    bb: number;
    tc: number;
    bc: number;
  }>(
    `WITH units AS (SELECT call_id, u, t, b FROM _run_call_units WHERE run_id = $1),
     calls AS (
       SELECT l.endpoint_id AS e, l.charge_cny::DOUBLE AS cny, l.task_id IS NULL AND l.charge_cny > 0 AS charged,
              coalesce(units.u, l.tasks)::DOUBLE AS u, coalesce(units.t, l.tasks)::DOUBLE AS t, coalesce(units.b, 0)::DOUBLE AS b
       FROM ledger AS l LEFT JOIN units USING (call_id) WHERE l.run_id = $1)
     SELECT e, coalesce(sum(cny), 0)::DOUBLE AS spent,
            coalesce(sum(cny) FILTER (WHERE charged), 0)::DOUBLE AS charged,
            coalesce(sum(u) FILTER (WHERE charged), 0)::DOUBLE AS units,
            coalesce(sum(t) FILTER (WHERE charged), 0)::DOUBLE AS t,
            coalesce(sum(b) FILTER (WHERE charged), 0)::DOUBLE AS b,
            coalesce(sum(t * t) FILTER (WHERE charged), 0)::DOUBLE AS tt,
            coalesce(sum(t * b) FILTER (WHERE charged), 0)::DOUBLE AS tb,
            coalesce(sum(b * b) FILTER (WHERE charged), 0)::DOUBLE AS bb,
            coalesce(sum(t * cny) FILTER (WHERE charged), 0)::DOUBLE AS tc,
            coalesce(sum(b * cny) FILTER (WHERE charged), 0)::DOUBLE AS bc
     FROM calls GROUP BY e`,
    [c.runId],
  );
  const history = (c.priceHistory ??= await readPriceHistory(c.wh));
  const byEndpoint = new Map(rows.map((r) => [r.e, r]));
  return {
    spentCny: rows.reduce((s, r) => s + r.spent, 0),
    chargedCny: rows.reduce((s, r) => s + r.charged, 0),
    chargedUnits: rows.reduce((s, r) => s + r.units, 0),
    next: group.map((b) => {
      const own = byEndpoint.get(b.endpoint.id);
      const known = history.byPipeline.get(`${c.o.pipeline.name}\0${b.endpoint.id}`) ?? history.byEndpoint.get(b.endpoint.id);
      return {
        units: b.tasks.map((t) => taskUnits(b.endpoint.api, t.spec)),
        ...(b.endpoint.api === 'serp' ? { blocks: b.tasks.map((t) => taskBlocks(t.spec)) } : {}),
        ...(own && own.units > 0 ? { runPerUnit: own.charged / own.units } : {}),
        ...(own && own.t > 0 ? { run: { tasks: own.t, blocks: own.b, cny: own.charged, ...basePrices(own) } } : {}),
        ...(known === undefined ? {} : { knownPerUnit: known }),
      };
    }),
  };
}

/** A SERP task's further blocks of 10 results. */
const taskBlocks = (spec: Readonly<Record<string, unknown>>) => extraDepthBlocks(typeof spec.depth === 'number' ? spec.depth : undefined);

/**
 * The price of a task's base and of a further block that best fit the charged calls (least
 * squares of charge = tasks × base + blocks × block), when calls at two different depth mixes
 * tell them apart; nothing when they do not (one depth only: the two are one unknown).
 */
function basePrices(s: { tt: number; tb: number; bb: number; tc: number; bc: number }): { base?: number; block?: number } {
  const det = s.tt * s.bb - s.tb * s.tb;
  if (!(det > 1e-9 * Math.max(1, s.tt * s.bb))) return {};
  const base = (s.tc * s.bb - s.bc * s.tb) / det;
  const block = (s.tt * s.bc - s.tb * s.tc) / det;
  if (!(base > 0) || block < -1e-9) return {};
  return { base, block: Math.max(0, block) };
}

/** Asks the budget policy whether buying `group` would pass the budget (null: go on, or no budget). */
async function overBudget(c: RunContext, group: readonly PlannedBatch[]): Promise<{ reason: string; tasks: number } | null> {
  const budget = c.o.pipeline.budget_cny;
  if (budget === undefined) return null;
  const bought = { budgetCny: budget, ...(await purchases(c, group)) };
  const reason = budgetStop(bought);
  // `tasks`: how many of the group's tasks, in order, still fit within it.
  return reason === null ? null : { reason, tasks: tasksWithinBudget(bought) };
}

/**
 * With a budget, a batch whose endpoint neither this run nor an earlier one has paid for is
 * first bought one task alone: its charge prices the rest, which the budget then checks, so a
 * first run passes its budget by one task's charge at most, not by a batch (100 tasks). Returns
 * the batch as it should go (`split`: [the one task, the rest], or itself) and whether nothing
 * prices it (`alone`: a live call of such an endpoint goes without others beside it).
 */
async function probeFirst(c: RunContext, batch: PlannedBatch): Promise<{ split: PlannedBatch[]; alone: boolean }> {
  const { alone, at } = await unpriced(c, batch);
  if (batch.tasks.length < 2 || !alone) return { split: [batch], alone };
  c.note(
    `${batch.endpoint.path}: nothing tells its price${at > 0 ? ' at this depth' : ''} yet, so one task is bought alone first and its charge prices the rest for the budget`,
  );
  return {
    split: [
      { ...batch, tasks: [batch.tasks[at]!] },
      { ...batch, tasks: batch.tasks.filter((_, i) => i !== at) },
    ],
    alone,
  };
}

/**
 * With a budget: whether neither this run nor an earlier one has paid for the batch's endpoint,
 * or its tasks ask for further blocks of 10 whose price the run's charges do not tell yet; `at`:
 * the task to buy alone (the first at a depth mix not charged yet, whose charge tells it).
 */
async function unpriced(c: RunContext, batch: PlannedBatch): Promise<{ alone: boolean; at: number }> {
  // A sandbox key is never charged: nothing to price.
  if (c.o.pipeline.budget_cny === undefined || c.client.keyKind === 'sandbox') return { alone: false, at: 0 };
  const { next } = await purchases(c, [batch]);
  const p = next[0]!;
  if (!priceUnknown(p)) return { alone: false, at: 0 };
  const r = p.run;
  const at = r === undefined ? 0 : (p.blocks ?? []).findIndex((b) => Math.abs(b - r.blocks / r.tasks) > 1e-9);
  return { alone: true, at: Math.max(0, at) };
}
