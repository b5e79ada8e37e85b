import type { ServiceClient } from '../client/index.js';
import type { Warehouse } from '../warehouse/index.js';
import { accountToday, readAccount, statisticsNote } from './reconcile-account.js';
import { reconcileDay } from './reconcile-day.js';
import { readLedgers } from './reconcile-ledger.js';
import { addDays, dayRange } from './reconcile-range.js';
import type { Reconciliation } from './reconciliation.js';

/** Which days, in which zone, against which ledgers. */
export interface ReconcileOptions {
  /** First day: `yyyy-mm-dd`, `today` or `yesterday` (the account's today, in `tz`). Default today. */
  from?: string;
  /** Last day, inclusive; default `from`. */
  to?: string;
  /** IANA time zone of the days; default the account's (`user_data.timezone`), else UTC. */
  tz?: string;
  /**
   * The ledgers given are all the account's clients: a charge none of them knows is a
   * discrepancy. Otherwise it is listed in `unaccounted`, as possibly another warehouse's.
   */
  complete?: boolean;
}

/** The account's today's reconciliation (in its own time zone), every ledger charge checked: as `reconcileDays` with one warehouse, `complete`. */
export async function reconcile(wh: Warehouse, client: ServiceClient): Promise<Reconciliation> {
  const [r] = await reconcileDays([wh], client, { complete: true });
  return r!;
}

/**
 * Compares the ledgers with the account's own figures from `user_data`, day by day (calendar
 * days in `tz`): the day's spending per api (`money.statistics.day.total_<api>`, for the
 * account's current day in its own time zone, the only day `user_data` gives) against the
 * ledgers' charges of that day, the chain of `X-Svc-Balance-CNY` values against the charges
 * between them (every day: the balances are the account's own record, call by call), from the
 * day's last balance to the next one seen (a later day's, or the balance now), and every call
 * that came back without a charge header. Differences of 0.0001 CNY or more are listed.
 *
 * Several warehouses on one account: their ledgers are merged by call time into one chain and
 * their charges summed, so each one's calls explain the others' balance steps.
 *
 * Refunds (unused depth) come back to the balance when a task is done, between two calls,
 * and the ledger records each one as its own row when the task's result is collected
 * (ledger.ts), so possibly later and never on the exact call where the balance rose. The
 * balance chain is therefore checked against the charges of the calls, and every rise it
 * shows is matched against the day's refund rows (and later ones: a task done today may be
 * collected tomorrow), as one pool; only a rise the pool cannot cover is reported as
 * `unmatched_refund`. The account's day statistics count charges, so they are compared with
 * the calls' charges, without the refunds.
 */
export async function reconcileDays(whs: readonly Warehouse[], client: ServiceClient, o: ReconcileOptions = {}): Promise<Reconciliation[]> {
  const account = await readAccount(client);
  const tz = o.tz ?? account.accountTz;
  const { from, to } = dayRange(o, await accountToday(whs[0]!, tz, account));
  const complete = o.complete ?? false;
  const { rows, refundsByDay } = await readLedgers(whs, tz, from);

  const out: Reconciliation[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) {
    let refunded = 0n;
    for (const [d, m] of refundsByDay) if (d >= day) refunded += m;
    const statistics = statisticsNote(account, tz, day);
    out.push(
      reconcileDay(day, tz, rows, refunded, statistics === undefined ? account.dayStats : null, statistics, account.balanceNow, complete),
    );
  }
  return out;
}
