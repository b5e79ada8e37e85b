/**
 * One group of tasks about to be bought, each weighed in units (catalog `taskUnits`: a deep SERP
 * task is several), with what the ledger says a unit of its endpoint cost before.
 */
export interface NextPurchase {
  /** The units of each task, in the order they would be bought. */
  units: readonly number[];
  /**
   * The further blocks of 10 results (catalog `extraDepthBlocks`) each task asks for; absent:
   * none. The price of a further block is not the spec's (only that it "can add charges"): the
   * units weigh it at the reference fraction, the budget learns it from the charges (`run`).
   */
  blocks?: readonly number[];
  /**
   * What this run was charged for the endpoint's tasks (gross): how many tasks, their further
   * blocks, the CNY; and, when charges at two different depths tell both, the price of a task's
   * base and of a further block (least squares over the calls). Undefined before its first charge.
   */
  run?: { tasks: number; blocks: number; cny: number; base?: number; block?: number };
  /** CNY per unit this run has been charged for the same endpoint; undefined before its first charge there. */
  runPerUnit?: number;
  /** CNY per unit earlier runs were charged for this endpoint (this pipeline's first, else any); undefined when never bought. */
  knownPerUnit?: number;
}

/** What the run has spent and been charged so far. */
export interface Spent {
  /** Net: charges less the refunds collected (what the account lost). */
  spentCny: number;
  /** Charges alone (gross), and the units they bought: their ratio prices an endpoint never bought in this run or before. */
  chargedCny: number;
  chargedUnits: number;
}

/**
 * Whether buying `next` would pass the budget, as a message to stop with (null: go on).
 * The budget counts what the run spent net of refunds; the next tasks are priced at what a unit
 * of their endpoint was charged (before any refund: a task is charged its whole depth when
 * posted) in this run, else in earlier runs, else at this run's charges per unit over all
 * endpoints; a task of an endpoint never bought is not priced (0). The run therefore buys one
 * task alone first when it cannot price a batch (`priceUnknown`, post-step.ts): the budget can
 * then be passed by one task's charge at most. Pure: the run reads the ledger, this decides.
 */
export function budgetStop(a: Spent & { budgetCny: number | undefined; next: readonly NextPurchase[] }): string | null {
  if (a.budgetCny === undefined) return null;
  let next = 0;
  for (const p of a.next) for (let i = 0; i < p.units.length; i++) next += taskPrice(p, i, a);
  if (a.spentCny + next <= a.budgetCny + 1e-9) return null;
  const what = a.next.length > 1 ? `${a.next.length} calls` : 'batch';
  return `budget of ${a.budgetCny} CNY reached: ${a.spentCny.toFixed(4)} CNY spent, the next ${what} would cost about ${next.toFixed(4)} CNY; raise budget_cny and run again to continue`;
}

/**
 * What the `i`th task of `p` is priced at for the guard. From this run's charges of its endpoint:
 * base + blocks × block when they tell both; else at the dearest reading consistent with them
 * (a further block costs between nothing and the base: the charges per task `c` at `r` blocks
 * a task make a task of `b` blocks cost c, or c·(1+b)/(1+r) when a block costs the base). Else
 * per unit, from earlier runs or this run's charges of other endpoints, a further block at the
 * base price at least (the reference 0.75 may be the service's 1.0).
 */
function taskPrice(p: NextPurchase, i: number, a: Spent): number {
  const u = p.units[i]!;
  const b = p.blocks?.[i] ?? 0;
  const r = p.run;
  if (r !== undefined && r.tasks > 0) {
    if (r.base !== undefined && r.block !== undefined) return r.base + b * r.block;
    const c = r.cny / r.tasks;
    return Math.max(c, (c * (1 + b)) / (1 + r.blocks / r.tasks));
  }
  const unit = p.runPerUnit ?? p.knownPerUnit ?? (a.chargedUnits > 0 ? a.chargedCny / a.chargedUnits : 0);
  return p.runPerUnit === undefined ? unit * Math.max(u, 1 + b) : unit * u;
}

/**
 * Whether this run's charges leave a task of `p` priced at a guess: its further blocks differ
 * from those of the tasks charged and the charges do not yet tell a block's price from the base.
 */
function blockPriceUnknown(p: NextPurchase): boolean {
  const r = p.run;
  const bs = p.blocks ?? [];
  if (r === undefined || r.tasks === 0) return bs.some((b) => b > 0);
  if (r.base !== undefined && r.block !== undefined) return false;
  return bs.some((b) => Math.abs(b - r.blocks / r.tasks) > 1e-9);
}

/**
 * How many tasks of the next purchases, taken in order, fit in what is left of the budget,
 * priced as {@link budgetStop} prices them: a batch that would pass the budget is bought in
 * part, up to it, rather than not at all (a budget smaller than one batch would otherwise stop
 * every night at the same batch). Pure.
 */
export function tasksWithinBudget(a: Spent & { budgetCny: number; next: readonly NextPurchase[] }): number {
  let left = a.budgetCny - a.spentCny + 1e-9;
  let n = 0;
  for (const p of a.next) {
    for (let i = 0; i < p.units.length; i++) {
      const price = taskPrice(p, i, a);
      if (price > 0 && price > left) return n;
      left -= price;
      n++;
    }
  }
  return n;
}

/**
 * Whether a purchase has no price to go by: neither this run nor an earlier one was charged for
 * its endpoint, or its tasks ask for further blocks of 10 whose price this run's charges do not
 * tell yet (the run then buys one task alone, whose charge tells it).
 */
export function priceUnknown(p: NextPurchase): boolean {
  return (p.run === undefined && p.runPerUnit === undefined && p.knownPerUnit === undefined) || blockPriceUnknown(p);
}
