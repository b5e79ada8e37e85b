/**
 * Money as integers. CNY is held in units of 0.0001 (the precision of the
 * `X-Svc-Charge-CNY` header) and USD in micro-dollars, so that a ledger summed from the
 * headers matches the emulator's balance to the last digit: no float ever enters a sum.
 */

/** Units of 0.0001 CNY in one CNY. */
export const CNY_UNIT = 10_000;

/** The simulated CNY-per-USD rate behind the body's raw `cost` (USD) field. */
export const CNY_PER_USD_TENTHS = 72; // 7.2, kept in tenths so the conversion stays integral

/** Parses a non-negative decimal CNY string with at most 4 decimals into units. */
export function parseCny(text: string): number {
  const m = /^(\d+)(?:\.(\d{1,4}))?$/.exec(text.trim());
  if (!m) throw new Error(`balance "${text}" is not a CNY amount like "1000.0000" (at most 4 decimals)`);
  const units = Number(m[1]) * CNY_UNIT + Number((m[2] ?? '').padEnd(4, '0'));
  if (!Number.isSafeInteger(units)) throw new Error(`balance "${text}" is too large`);
  return units;
}

/** Formats CNY units with exactly 4 decimals, as the charge and balance headers carry them. */
export function formatCny(units: number): string {
  return formatFixed(units, 4);
}

/**
 * CNY units to USD micro-dollars at 7.2 CNY per USD, rounded half up. The raw USD cost
 * is a compatibility field and deliberately not the charge (spec, Billing).
 */
export function cnyUnitsToUsdMicros(units: number): number {
  // units * 0.0001 CNY / 7.2 = units * 100 / 7.2 micro-USD = units * 1000 / 72
  return Math.floor((units * 1000 * 2 + CNY_PER_USD_TENTHS) / (CNY_PER_USD_TENTHS * 2));
}

/** Formats micro-dollars with exactly 6 decimals, as `X-Svc-Cost-USD` carries them. */
export function formatUsd(micros: number): string {
  return formatFixed(micros, 6);
}

/** Micro-dollars as the JSON number of the body's `cost` fields. */
export function usdNumber(micros: number): number {
  return Number(formatUsd(micros));
}

function formatFixed(value: number, decimals: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`amount ${value} is not an integer number of units`);
  const sign = value < 0 ? '-' : '';
  const digits = String(Math.abs(value)).padStart(decimals + 1, '0');
  return `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}
