import { fromMicros, toMicros } from '../post/index.js';
import { checkBalanceChain } from './reconcile-balance-chain.js';
import { dayCharges } from './reconcile-charges.js';
import type { CallRow } from './reconcile-ledger.js';
import { TOLERANCE, type Discrepancy, type Findings, type Reconciliation } from './reconciliation.js';

const FOREIGN =
  " It may be another warehouse's (or another tool's) charge on this account: reconcile with --warehouse for each warehouse on it, or --strict if this one is its only client.";

/**
 * One day's reconciliation: its calls' charges, the account's statistics against them (when
 * `dayStats` is given), and the balance chain from the day's first call on (`all` is every
 * ledger call from the range's first day, in call order). A charge no ledger knows is a
 * discrepancy when the ledgers are `complete`, else listed as unaccounted.
 */
export function reconcileDay(
  day: string,
  timezone: string,
  all: readonly CallRow[],
  refunded: bigint,
  dayStats: Record<string, unknown> | null,
  statisticsNote: string | undefined,
  balanceNow: bigint | null,
  complete: boolean,
): Reconciliation {
  const out: Discrepancy[] = [];
  const unaccounted: Discrepancy[] = [];
  const findings: Findings = {
    out,
    foreign: (d) => {
      if (complete) out.push(d);
      else unaccounted.push({ ...d, detail: d.detail + FOREIGN });
    },
  };
  const rows = all.filter((r) => r.day === day);
  const charges = dayCharges(rows, out);
  const account = compareStatistics(day, dayStats, charges.byApi, findings);
  checkBalanceChain(all, day, refunded, balanceNow, findings);
  return {
    day,
    timezone,
    ledgerCny: fromMicros(charges.total),
    refundedCny: fromMicros(refunded),
    accountCny: dayStats ? fromMicros(account.total) : null,
    ...(statisticsNote ? { statisticsNote } : {}),
    unitemizedCny: fromMicros(account.unitemized),
    balanceCny: balanceNow === null ? null : fromMicros(balanceNow),
    calls: rows.length,
    uncharged: charges.uncharged,
    discrepancies: out,
    unaccounted,
    estimates: charges.estimates,
  };
}

/**
 * Spending per api: the account's statistics against the ledgers, when it has them for the day.
 * `/v1` charges the account does not itemize are summed as `unitemized` instead.
 */
function compareStatistics(
  day: string,
  dayStats: Record<string, unknown> | null,
  ledgerByApi: ReadonlyMap<string, bigint>,
  findings: Findings,
): { total: bigint; unitemized: bigint } {
  let total = 0n;
  let unitemized = 0n;
  const apis = new Set<string>([...ledgerByApi.keys()]);
  if (dayStats) for (const k of Object.keys(dayStats)) if (k.startsWith('total_')) apis.add(k.slice(6));
  for (const api of [...apis].sort()) {
    if (api === 'v1' && typeof dayStats?.total_v1 !== 'number') {
      unitemized += ledgerByApi.get(api) ?? 0n;
      continue;
    }
    if (!dayStats) continue;
    const account = toMicros(dayStats[`total_${api}`] as number | undefined);
    const ledger = ledgerByApi.get(api) ?? 0n;
    total += account;
    const diff = account - ledger;
    if (diff >= TOLERANCE)
      findings.foreign({
        kind: 'charge_not_in_ledger',
        api,
        amountCny: fromMicros(diff),
        detail: `${api}: the account spent ${fromMicros(account)} CNY on ${day}, the ledger knows ${fromMicros(ledger)}.`,
      });
    else if (-diff >= TOLERANCE)
      findings.out.push({
        kind: 'ledger_charge_not_in_account',
        api,
        amountCny: fromMicros(diff),
        detail: `${api}: the ledger holds ${fromMicros(ledger)} CNY on ${day}, the account shows ${fromMicros(account)}`,
      });
  }
  return { total, unitemized };
}
