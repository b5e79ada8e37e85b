/**
 * One group of tasks about to be bought, each weighed in units (catalog `taskUnits`: a deep SERP
 * task is several), with what the ledger says a unit of its endpoint cost before.
 */
export interface NextPurchase {
  /** The units of each task, in the order they would be bought. */
  units: readonly number[];
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
  for (const p of a.next) next += perUnit(p, a) * p.units.reduce((s, u) => s + u, 0);
  if (a.spentCny + next <= a.budgetCny + 1e-9) return null;
  const what = a.next.length > 1 ? `${a.next.length} calls` : 'batch';
  return `budget of ${a.budgetCny} CNY reached: ${a.spentCny.toFixed(4)} CNY spent, the next ${what} would cost about ${next.toFixed(4)} CNY; raise budget_cny and run again to continue`;
}

/** What one unit of `p` is priced at: what this run was charged for its endpoint, else earlier runs, else this run's charges per unit. */
function perUnit(p: NextPurchase, a: Spent): number {
  return p.runPerUnit ?? p.knownPerUnit ?? (a.chargedUnits > 0 ? a.chargedCny / a.chargedUnits : 0);
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
    const price = perUnit(p, a);
    for (const u of p.units) {
      if (price > 0 && price * u > left) return n;
      left -= price * u;
      n++;
    }
  }
  return n;
}

/** Whether a purchase has no price to go by: neither this run nor an earlier one was charged for its endpoint. */
export function priceUnknown(p: NextPurchase): boolean {
  return p.runPerUnit === undefined && p.knownPerUnit === undefined;
}
