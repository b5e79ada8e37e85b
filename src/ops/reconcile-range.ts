import { EtlError } from '../errors.js';

/** The longest range reconciled at once. */
export const MAX_DAYS = 366;

/** `yyyy-mm-dd` plus `n` days. */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/** Whether `s` is a calendar day written yyyy-mm-dd. */
function isCalendarDay(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) && new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s;
}

/**
 * The days asked for, `today` and `yesterday` named from the account's `today`; refused with
 * ETL_CONFIG_INVALID when a day is not one, the range runs backwards, or it is over MAX_DAYS.
 */
export function dayRange(o: { from?: string; to?: string }, today: string): { from: string; to: string } {
  const named = (d: string) => (d === 'today' ? today : d === 'yesterday' ? addDays(today, -1) : d);
  const from = named(o.from ?? 'today');
  const to = named(o.to ?? o.from ?? 'today');
  for (const [name, d] of [
    ['from', from],
    ['to', to],
  ] as const)
    if (!isCalendarDay(d))
      throw new EtlError(
        'ETL_CONFIG_INVALID',
        `--${name === 'from' && o.to === undefined ? 'day' : name} takes yyyy-mm-dd, today or yesterday; got '${d}'`,
      );
  if (from > to) throw new EtlError('ETL_CONFIG_INVALID', `--from ${from} is after --to ${to}: no day is in that range; swap them`);
  if (Date.parse(to) - Date.parse(from) >= MAX_DAYS * 86_400_000)
    throw new EtlError('ETL_CONFIG_INVALID', `--from ${from} --to ${to} is more than ${MAX_DAYS} days: reconcile a shorter range`);
  return { from, to };
}
