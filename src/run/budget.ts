/** One group of tasks about to be bought, with what the ledger says one of its tasks cost before. */
export interface NextPurchase {
  tasks: number;
  /** CNY per task this run has paid for the same endpoint; undefined before its first charge there. */
  runPerTask?: number;
  /** CNY per task earlier runs paid for this endpoint (this pipeline's first, else any); undefined when never bought. */
  knownPerTask?: number;
}

/**
 * Whether buying `next` would pass the budget, as a message to stop with (null: go on).
 * The next tasks are priced at what this run has paid per task for their endpoint, else at
 * what the ledger says earlier runs paid for it, else at this run's average over all its
 * charges; a task of an endpoint never bought is not priced (0). The run therefore buys one
 * task alone first when it cannot price a batch (`priceUnknown`, post-step.ts): the budget
 * can then be passed by one task's charge at most. Pure: the run reads the ledger, this decides.
 */
export function budgetStop(a: {
  budgetCny: number | undefined;
  spentCny: number;
  chargedTasks: number;
  next: readonly NextPurchase[];
}): string | null {
  if (a.budgetCny === undefined) return null;
  let next = 0;
  for (const p of a.next) next += perTask(p, a) * p.tasks;
  if (a.spentCny + next <= a.budgetCny) return null;
  const what = a.next.length > 1 ? `${a.next.length} calls` : 'batch';
  return `budget of ${a.budgetCny} CNY reached: ${a.spentCny.toFixed(4)} CNY spent, the next ${what} would cost about ${next.toFixed(4)} CNY; raise budget_cny and run again to continue`;
}

/** What one task of `p` is priced at: what this run paid for its endpoint, else earlier runs, else this run's average. */
function perTask(p: NextPurchase, a: { spentCny: number; chargedTasks: number }): number {
  return p.runPerTask ?? p.knownPerTask ?? (a.chargedTasks > 0 ? a.spentCny / a.chargedTasks : 0);
}

/**
 * How many tasks of the next purchases, taken in order, fit in what is left of the budget,
 * priced as {@link budgetStop} prices them: a batch that would pass the budget is bought in
 * part, up to it, rather than not at all (a budget smaller than one batch would otherwise stop
 * every night at the same batch). Pure.
 */
export function tasksWithinBudget(a: { budgetCny: number; spentCny: number; chargedTasks: number; next: readonly NextPurchase[] }): number {
  let left = a.budgetCny - a.spentCny;
  let n = 0;
  for (const p of a.next) {
    const price = perTask(p, a);
    const k = price > 0 ? Math.max(0, Math.min(p.tasks, Math.floor(left / price + 1e-9))) : p.tasks;
    n += k;
    left -= k * price;
    if (k < p.tasks) break;
  }
  return n;
}

/** Whether a purchase has no price to go by: neither this run nor an earlier one paid for its endpoint. */
export function priceUnknown(p: NextPurchase): boolean {
  return p.runPerTask === undefined && p.knownPerTask === undefined;
}
