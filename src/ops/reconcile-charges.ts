import { fromMicros, toMicros } from '../post/index.js';
import type { CallRow } from './reconcile-ledger.js';
import type { Discrepancy, EstimatedCharge } from './reconciliation.js';

/** What the ledgers' calls of a day were charged. */
export interface DayCharges {
  /** Micro-CNY per api (`v1` for every `/v1` path). */
  byApi: Map<string, bigint>;
  total: bigint;
  /** Sandbox calls: nothing charged. */
  uncharged: number;
  estimates: EstimatedCharge[];
}

/**
 * Sums the day's charges by api; a call whose charge is unknown is pushed to `out` instead
 * (`missing_charge_header`), and one whose charge is an estimate is listed in `estimates`.
 */
export function dayCharges(rows: readonly CallRow[], out: Discrepancy[]): DayCharges {
  const c: DayCharges = { byApi: new Map(), total: 0n, uncharged: 0, estimates: [] };
  for (const r of rows) {
    if (r.sandbox) {
      c.uncharged++;
      continue;
    }
    if (r.charge === null) {
      out.push(missingCharge(r));
      continue;
    }
    if (r.estimated) c.estimates.push(estimatedCharge(r, r.charge));
    const api = r.path.startsWith('/v1/') ? 'v1' : (r.path.split('/')[2] ?? 'unknown');
    const m = toMicros(r.charge);
    c.byApi.set(api, (c.byApi.get(api) ?? 0n) + m);
    c.total += m;
  }
  return c;
}

/** A call without a charge: its answer lacked the header, or never arrived. */
function missingCharge(r: CallRow): Discrepancy {
  return {
    kind: 'missing_charge_header',
    amountCny: '0.000000',
    detail: r.lost
      ? `${r.path}: sent, but its answer never arrived (a timeout, a dropped connection, or the run was killed while it was out), so its charge is unknown; the service may have charged it. ${r.path.startsWith('/v3/') && r.tasks > 0 ? 'Its tasks are looked up by tag at the next run of its pipeline, which prices it' : 'It has no tasks to look up: ask the service for the charge of this request'} (our request id ${r.call_id}, sent in the X-Svc-Request-ID header)`
      : `${r.path}: no X-Svc-Charge-CNY header; its cost is unknown`,
    callId: r.call_id,
    requestId: r.request_id ?? undefined,
  };
}

/** A lost call priced once id_list listed what it created (or found it created nothing). */
function estimatedCharge(r: CallRow, charge: string): EstimatedCharge {
  return {
    callId: r.call_id,
    path: r.path,
    amountCny: fromMicros(toMicros(charge)),
    detail:
      toMicros(charge) === 0n
        ? `its answer never arrived, and id_list lists none of its tasks: the service created nothing, so nothing was charged (our request id ${r.call_id}, sent in the X-Svc-Request-ID header)`
        : `its answer never arrived; estimated from the USD cost id_list gave the tasks it created, and counted in the ledger's charges above (our request id ${r.call_id}, sent in the X-Svc-Request-ID header)`,
  };
}
