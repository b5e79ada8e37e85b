import { endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { Warehouse } from '../warehouse/index.js';
import { fromMicros, toMicros } from './money.js';

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
  /** The account's statistics day (`yyyy-MM-dd` in the account time zone). */
  day: string;
  timezone: string;
  /** What the ledger's calls of the day were charged (gross, as the account's statistics count). */
  ledgerCny: string;
  /** Refund rows of the day and after, matched against rises of the balance. */
  refundedCny: string;
  accountCny: string;
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
const TOLERANCE = 100n;

type Tree = Record<string, unknown>;

/**
 * Compares the ledger with the account's own figures from `user_data`: the day's spending
 * per api (`money.statistics.day.total_<api>`) against the ledger's charges of that day in
 * the account's time zone, the chain of `X-Svc-Balance-CNY` values against the charges
 * between them, the balance now against the last one seen, and every call that came back
 * without a charge header. Differences of 0.0001 CNY or more are listed.
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
export async function reconcile(wh: Warehouse, client: ServiceClient): Promise<Reconciliation> {
  const call = await client.call(endpoint('appendix.user_data'));
  const user = (call.envelope.tasks?.[0]?.result?.[0] ?? {}) as Tree;
  const money = (user.money ?? {}) as Tree;
  const dayStats = (((money.statistics ?? {}) as Tree).day ?? {}) as Tree;
  const timezone = typeof user.timezone === 'string' && user.timezone ? user.timezone : 'UTC';
  const day = typeof dayStats.value === 'string' ? dayStats.value : new Date().toISOString().slice(0, 10);
  const out: Discrepancy[] = [];
  const estimates: EstimatedCharge[] = [];

  const rows = await wh.all<{
    call_id: string;
    request_id: string | null;
    path: string;
    charge: string | null;
    balance: string | null;
    lost: boolean;
    estimated: boolean;
    sandbox: boolean;
    tasks: number;
  }>(
    `SELECT l.call_id, l.request_id, l.path, l.charge_cny::VARCHAR AS charge, l.balance_cny::VARCHAR AS balance, l.tasks,
            l.http_status IS NULL AS lost, coalesce(l.charge_estimated, false) AS estimated,
            coalesce(r.key_kind = 'sandbox', false) AS sandbox
     FROM ledger l LEFT JOIN runs r USING (run_id)
     WHERE (l.called_at AT TIME ZONE $1)::DATE = $2::DATE AND l.task_id IS NULL
     ORDER BY l.called_at, l.call_id`,
    [timezone, day],
  );
  const [refunds] = await wh.all<{ refunded: string }>(
    `SELECT coalesce(sum(l.refund_cny), 0)::VARCHAR AS refunded
     FROM ledger l LEFT JOIN runs r USING (run_id)
     WHERE (l.called_at AT TIME ZONE $1)::DATE >= $2::DATE AND l.task_id IS NOT NULL AND NOT coalesce(r.key_kind = 'sandbox', false)`,
    [timezone, day],
  );
  const refunded = toMicros(refunds?.refunded ?? '0');
  const pool = { micros: refunded };
  const ledgerByApi = new Map<string, bigint>();
  let ledgerTotal = 0n;
  let uncharged = 0;
  for (const r of rows) {
    if (r.sandbox) {
      uncharged++;
      continue;
    }
    if (r.charge === null) {
      out.push({
        kind: 'missing_charge_header',
        amountCny: '0.000000',
        detail: r.lost
          ? `${r.path}: sent, but its answer never arrived (a timeout, a dropped connection, or the run was killed while it was out), so its charge is unknown; the service may have charged it. ${r.path.startsWith('/v3/') && r.tasks > 0 ? 'Its tasks are looked up by tag at the next run of its pipeline, which prices it' : 'It has no tasks to look up: ask the service for the charge of this request'} (our request id ${r.call_id}, sent in the X-Svc-Request-ID header)`
          : `${r.path}: no X-Svc-Charge-CNY header; its cost is unknown`,
        callId: r.call_id,
        requestId: r.request_id ?? undefined,
      });
      continue;
    }
    if (r.estimated)
      estimates.push({
        callId: r.call_id,
        path: r.path,
        amountCny: fromMicros(toMicros(r.charge)),
        detail:
          toMicros(r.charge) === 0n
            ? `its answer never arrived, and id_list lists none of its tasks: the service created nothing, so nothing was charged (our request id ${r.call_id}, sent in the X-Svc-Request-ID header)`
            : `its answer never arrived; estimated from the USD cost id_list gave the tasks it created, and counted in the ledger's charges above (our request id ${r.call_id}, sent in the X-Svc-Request-ID header)`,
      });
    const api = r.path.startsWith('/v1/') ? 'v1' : (r.path.split('/')[2] ?? 'unknown');
    const m = toMicros(r.charge);
    ledgerByApi.set(api, (ledgerByApi.get(api) ?? 0n) + m);
    ledgerTotal += m;
  }

  // Spending per api: the account's statistics against the ledger.
  let accountTotal = 0n;
  let unitemized = 0n;
  const apis = new Set<string>([...ledgerByApi.keys()]);
  for (const k of Object.keys(dayStats)) if (k.startsWith('total_')) apis.add(k.slice(6));
  for (const api of [...apis].sort()) {
    if (api === 'v1' && typeof dayStats.total_v1 !== 'number') {
      unitemized += ledgerByApi.get(api) ?? 0n;
      continue;
    }
    const account = toMicros(dayStats[`total_${api}`] as number | undefined);
    const ledger = ledgerByApi.get(api) ?? 0n;
    accountTotal += account;
    const diff = account - ledger;
    if (diff >= TOLERANCE)
      out.push({
        kind: 'charge_not_in_ledger',
        api,
        amountCny: fromMicros(diff),
        detail: `${api}: the account spent ${fromMicros(account)} CNY on ${day}, the ledger knows ${fromMicros(ledger)}`,
      });
    else if (-diff >= TOLERANCE)
      out.push({
        kind: 'ledger_charge_not_in_account',
        api,
        amountCny: fromMicros(diff),
        detail: `${api}: the ledger holds ${fromMicros(ledger)} CNY on ${day}, the account shows ${fromMicros(account)}`,
      });
  }

  // The balance chain: each balance should be the previous one less the charges of the calls
  // since, this one's and those of calls that gave no balance (an endpoint without the header, an
  // answer that never arrived, priced or not).
  let prev: { balance: bigint; callId: string } | null = null;
  let since = 0n;
  for (const r of rows) {
    if (r.sandbox) continue;
    since += toMicros(r.charge);
    if (r.balance === null) continue;
    const bal = toMicros(r.balance);
    if (prev) {
      const expected = prev.balance - since;
      pushMovement(out, pool, bal - expected, `between call ${prev.callId} and ${r.call_id}`, r.call_id, r.request_id);
    }
    prev = { balance: bal, callId: r.call_id };
    since = 0n;
  }
  const balanceNow = typeof money.balance === 'number' ? toMicros(money.balance) : null;
  if (prev && balanceNow !== null) pushMovement(out, pool, balanceNow - prev.balance, `since the last call in the ledger (${prev.callId})`);

  return {
    day,
    timezone,
    ledgerCny: fromMicros(ledgerTotal),
    refundedCny: fromMicros(refunded),
    accountCny: fromMicros(accountTotal),
    unitemizedCny: fromMicros(unitemized),
    balanceCny: balanceNow === null ? null : fromMicros(balanceNow),
    calls: rows.length,
    uncharged,
    discrepancies: out,
    estimates,
  };
}

/** Reports a balance movement the calls' charges do not explain; a rise is first matched against the refund rows' pool. */
function pushMovement(
  out: Discrepancy[],
  pool: { micros: bigint },
  delta: bigint,
  where: string,
  callId?: string,
  requestId?: string | null,
): void {
  if (delta > 0n) {
    const matched = delta < pool.micros ? delta : pool.micros;
    pool.micros -= matched;
    delta -= matched;
  }
  if (delta >= TOLERANCE)
    out.push({
      kind: 'unmatched_refund',
      amountCny: fromMicros(delta),
      detail: `the balance rose by ${fromMicros(delta)} CNY ${where} beyond the refunds in the ledger (a top-up, or a refund of a task not collected yet)`,
      callId,
      requestId: requestId ?? undefined,
    });
  else if (-delta >= TOLERANCE)
    out.push({
      kind: 'unexplained_debit',
      amountCny: fromMicros(delta),
      detail: `the balance fell by ${fromMicros(-delta)} CNY more than the ledger's charges ${where}`,
      callId,
      requestId: requestId ?? undefined,
    });
}
