/**
 * What one HTTP call cost, read from the service's headers. Amounts stay decimal strings
 * end to end (DuckDB stores them as DECIMAL), so no float ever touches money.
 */
export interface ChargeRecord {
  requestId: string | null;
  /** `X-Svc-Charge-CNY`: the amount actually charged. Null when the header is absent. */
  chargeCny: string | null;
  /** `X-Svc-Cost-USD`: raw cost, kept for reference, never summed as the charge. */
  costUsd: string | null;
  /** `X-Svc-Balance-CNY`: balance after the call, where the endpoint reports it. */
  balanceCny: string | null;
}

/**
 * A decimal amount the ledger's DECIMAL(18,6) holds: at most 12 digits before the point (a
 * larger one, from a broken or hostile service, would fail the ledger's insert and with it the
 * run; read as absent, the call's charge is unknown and `pipeline reconcile` shows it).
 */
const DECIMAL = /^-?\d{1,12}(\.\d+)?$/;

function header(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const v = headers[name.toLowerCase()];
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined) return null;
  const t = s.trim();
  return t === '' ? null : t;
}

function decimal(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const v = header(headers, name);
  return v !== null && DECIMAL.test(v) ? v : null;
}

/** Reads the four charge headers of a response; malformed amounts read as absent. */
export function readCharge(headers: Record<string, string | string[] | undefined>): ChargeRecord {
  return {
    requestId: header(headers, 'X-Svc-Request-ID'),
    chargeCny: decimal(headers, 'X-Svc-Charge-CNY'),
    costUsd: decimal(headers, 'X-Svc-Cost-USD'),
    balanceCny: decimal(headers, 'X-Svc-Balance-CNY'),
  };
}
