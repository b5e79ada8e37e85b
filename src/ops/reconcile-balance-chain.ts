import { fromMicros, toMicros } from '../post/index.js';
import type { CallRow } from './reconcile-ledger.js';
import { TOLERANCE, type Discrepancy, type Findings } from './reconciliation.js';

/**
 * The balance chain of `day`: each balance should be the previous one less the charges of the
 * calls since, this one's and those of calls that gave no balance (an endpoint without the
 * header, an answer that never arrived, priced or not). From the day's last balance it goes on
 * to the next one seen, a later day's, or to the balance now. A rise is matched against the
 * pool of refund rows (`refunded`, micro-CNY) before it is reported.
 */
export function checkBalanceChain(
  all: readonly CallRow[],
  day: string,
  refunded: bigint,
  balanceNow: bigint | null,
  findings: Findings,
): void {
  const pool = { micros: refunded };
  const push = (delta: bigint, where: string, callId?: string, requestId?: string | null) => {
    const d = movement(pool, delta, where, callId, requestId);
    if (d?.kind === 'unexplained_debit') findings.foreign(d);
    else if (d) findings.out.push(d);
  };
  let prev: { balance: bigint; callId: string } | null = null;
  let since = 0n;
  let closed = false;
  const first = all.findIndex((r) => r.day === day);
  for (let i = first < 0 ? all.length : first; i < all.length; i++) {
    const r = all[i]!;
    if (r.sandbox) continue;
    since += toMicros(r.charge);
    if (r.balance === null) continue;
    const bal = toMicros(r.balance);
    if (prev) push(bal - (prev.balance - since), `between call ${prev.callId} and ${r.call_id}`, r.call_id, r.request_id);
    if (r.day !== day) {
      closed = true;
      break;
    }
    prev = { balance: bal, callId: r.call_id };
    since = 0n;
  }
  if (prev && !closed && balanceNow !== null)
    push(balanceNow - (prev.balance - since), `since the last call in the ledger (${prev.callId}), up to now`);
}

/** A balance movement the calls' charges do not explain, or null; a rise is first matched against the refund rows' pool. */
function movement(pool: { micros: bigint }, delta: bigint, where: string, callId?: string, requestId?: string | null): Discrepancy | null {
  if (delta > 0n) {
    const matched = delta < pool.micros ? delta : pool.micros;
    pool.micros -= matched;
    delta -= matched;
  }
  if (delta >= TOLERANCE)
    return {
      kind: 'unmatched_refund',
      amountCny: fromMicros(delta),
      detail: `the balance rose by ${fromMicros(delta)} CNY ${where} beyond the refunds in the ledger (a top-up, or a refund of a task not collected yet)`,
      callId,
      requestId: requestId ?? undefined,
    };
  if (-delta >= TOLERANCE)
    return {
      kind: 'unexplained_debit',
      amountCny: fromMicros(delta),
      detail: `the balance fell by ${fromMicros(-delta)} CNY more than the ledger's charges ${where}.`,
      callId,
      requestId: requestId ?? undefined,
    };
  return null;
}
