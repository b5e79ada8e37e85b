import { extraDepthBlocks, TASK_BLOCKS_SQL, TASK_UNITS_SQL, taskUnits } from '../catalog/index.js';
import { readPriceHistory, type PlannedBatch } from '../plan/index.js';
import { budgetStop, priceUnknown, tasksWithinBudget, type NextPurchase, type Spent } from './budget.js';
import type { PostContext } from './context.js';

// The budget's reads while posting: what the run has bought, what a batch would cost, and
// whether a batch must first be priced by one task alone. budget.ts decides; this reads the ledger.

/**
 * What this run has spent (net of refunds), what it was charged per unit of each endpoint (gross,
 * units from the tasks each call posted), and what earlier runs were charged per unit, for the
 * budget policy.
 */
async function purchases(c: PostContext, group: readonly PlannedBatch[]): Promise<Spent & { next: NextPurchase[] }> {
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
export async function overBudget(c: PostContext, group: readonly PlannedBatch[]): Promise<{ reason: string; tasks: number } | null> {
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
export async function probeFirst(c: PostContext, batch: PlannedBatch): Promise<{ split: PlannedBatch[]; alone: boolean }> {
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
async function unpriced(c: PostContext, batch: PlannedBatch): Promise<{ alone: boolean; at: number }> {
  // A sandbox key is never charged: nothing to price.
  if (c.o.pipeline.budget_cny === undefined || c.client.keyKind === 'sandbox') return { alone: false, at: 0 };
  const { next } = await purchases(c, [batch]);
  const p = next[0]!;
  if (!priceUnknown(p)) return { alone: false, at: 0 };
  const r = p.run;
  const at = r === undefined ? 0 : (p.blocks ?? []).findIndex((b) => Math.abs(b - r.blocks / r.tasks) > 1e-9);
  return { alone: true, at: Math.max(0, at) };
}
