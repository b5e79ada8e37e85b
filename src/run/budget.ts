/** One group of tasks about to be bought, with what the ledger says one of its tasks cost before. */
export interface NextPurchase {
  tasks: number;
  /** CNY per task earlier runs paid for this endpoint (this pipeline's first, else any); undefined when never bought. */
  knownPerTask?: number;
}

/**
 * Whether buying `next` would pass the budget, as a message to stop with (null: go on).
 * The next tasks are priced at the average charge per task seen so far in this run, or,
 * before the run's first charge, at what the ledger says earlier runs paid; a task never
 * bought before is not priced (0), so a first run of a new pipeline can pass the budget by
 * at most one batch. Pure: the run reads the ledger, this decides.
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
    const perTask = a.chargedTasks > 0 ? a.spentCny / a.chargedTasks : (p.knownPerTask ?? 0);
    next += perTask * p.tasks;
  }
  if (a.spentCny + next <= a.budgetCny) return null;
  const what = a.next.length > 1 ? `${a.next.length} calls` : 'batch';
  return `budget of ${a.budgetCny} CNY reached: ${a.spentCny.toFixed(4)} CNY spent, the next ${what} would cost about ${next.toFixed(4)} CNY; raise budget_cny and run again to continue`;
}
