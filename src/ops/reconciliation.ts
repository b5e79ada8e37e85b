/** What kind of difference finance is looking at. */
export type DiscrepancyKind =
  /** A ledger call whose response carried no `X-Svc-Charge-CNY`, or whose answer never arrived: its cost is unknown. */
  | 'missing_charge_header'
  /** The account spent more than the ledger knows (another client, or a lost row). */
  | 'charge_not_in_ledger'
  /** The ledger holds charges the account's statistics do not show. */
  | 'ledger_charge_not_in_account'
  /** The balance rose by more than the ledger's refund rows explain: a top-up, or a refund not (yet) recorded. */
  | 'unmatched_refund'
  /** The balance fell by more than the ledger's charges between two calls. */
  | 'unexplained_debit';

export interface Discrepancy {
  kind: DiscrepancyKind;
  /** Exact decimal string, CNY (positive: the account side is higher). */
  amountCny: string;
  detail: string;
  callId?: string;
  requestId?: string;
  api?: string;
}

export interface Reconciliation {
  /** The day reconciled (`yyyy-MM-dd` in `timezone`). */
  day: string;
  timezone: string;
  /** What the ledgers' calls of the day were charged (gross, as the account's statistics count). */
  ledgerCny: string;
  /** Refund rows of the day and after, matched against rises of the balance. */
  refundedCny: string;
  /**
   * The account's own spending of the day (`money.statistics.day`), or null when `user_data` has
   * none for it: it gives its current day only, in its own time zone, so a past day, or a day in
   * another zone, is checked by the balance chain alone (`statisticsNote` says so).
   */
  accountCny: string | null;
  /** Why the account's statistics were not compared, when they were not. */
  statisticsNote?: string;
  /**
   * The day's `/v1` charges (chat, embeddings), in `ledgerCny` but not compared with the
   * account's statistics: the interface describes those by `/v3` api and says nothing of `/v1`
   * (the emulator leaves it out), so a `/v1` charge is checked by the balance chain alone
   * (unless the account shows `total_v1`).
   */
  unitemizedCny: string;
  balanceCny: string | null;
  calls: number;
  uncharged: number;
  discrepancies: Discrepancy[];
  /**
   * Charges the account has that none of the given ledgers knows (`charge_not_in_ledger`,
   * `unexplained_debit`), when the ledgers are not said to be all of the account's clients (one
   * warehouse, without `complete`): they may be another warehouse's (or another tool's). Not
   * discrepancies; with `complete` they are listed in `discrepancies` instead.
   */
  unaccounted: Discrepancy[];
  /**
   * The day's calls whose charge is an estimate (`ledger.charge_estimated`: a POST whose answer
   * never arrived, priced once `id_list` listed the tasks it created). Counted in `ledgerCny`, so
   * compared with the account like any charge; listed to be confirmed, not a discrepancy.
   */
  estimates: EstimatedCharge[];
}

export interface EstimatedCharge {
  callId: string;
  path: string;
  amountCny: string;
  detail: string;
}

/** Differences below 0.0001 CNY (100 micro-CNY) are rounding, not discrepancies. */
export const TOLERANCE = 100n;

/** Where a day's differences go: `out` are discrepancies; `foreign` takes a charge the account has that no ledger knows. */
export interface Findings {
  out: Discrepancy[];
  foreign: (d: Discrepancy) => void;
}
