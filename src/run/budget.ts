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
  for (const p of a.next) {
    const perTask = p.runPerTask ?? p.knownPerTask ?? (a.chargedTasks > 0 ? a.spentCny / a.chargedTasks : 0);
    next += perTask * p.tasks;
  }
  if (a.spentCny + next <= a.budgetCny) return null;
  const what = a.next.length > 1 ? `${a.next.length} calls` : 'batch';
  return `budget of ${a.budgetCny} CNY reached: ${a.spentCny.toFixed(4)} CNY spent, the next ${what} would cost about ${next.toFixed(4)} CNY; raise budget_cny and run again to continue`;
}

/** Whether a purchase has no price to go by: neither this run nor an earlier one paid for its endpoint. */
export function priceUnknown(p: NextPurchase): boolean {
  return p.runPerTask === undefined && p.knownPerTask === undefined;
}
