/**
 * Exact CNY arithmetic: amounts as bigint millionths of a CNY, parsed from and printed as
 * decimal strings, so sums of charge headers never touch a float.
 */
const UNIT = 1_000_000n;

/** `'0.0430'` (or a number) to micro-CNY; null or empty is 0. */
export function toMicros(v: number | string | null | undefined): bigint {
  if (v === null || v === undefined || v === '') return 0n;
  const s = typeof v === 'number' ? v.toFixed(6) : v;
  const neg = s.startsWith('-');
  const [int, frac = ''] = s.replace('-', '').split('.');
  const m = BigInt(int || '0') * UNIT + BigInt((frac + '000000').slice(0, 6));
  return neg ? -m : m;
}

/** Micro-CNY to a 6-decimal string. */
export function fromMicros(m: bigint): string {
  const neg = m < 0n;
  const a = neg ? -m : m;
  return `${neg ? '-' : ''}${a / UNIT}.${String(a % UNIT).padStart(6, '0')}`;
}
