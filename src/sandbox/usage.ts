/** Calls and spending of one period, by `{api}` and function. */
export interface PeriodUsage {
  calls: Map<string, Map<string, number>>;
  spentUnits: Map<string, Map<string, number>>;
}

/**
 * Counts calls and CNY spent per day and per minute (UTC, emulator clock), by api and
 * function, so `user_data.statistics` and `money.statistics` report what was really
 * done rather than made-up numbers.
 */
export class UsageLedger {
  readonly #periods = new Map<string, PeriodUsage>();

  record(at: Date, api: string, fn: string, chargedUnits: number): void {
    for (const period of [dayOf(at), minuteOf(at)]) {
      let p = this.#periods.get(period);
      if (!p) {
        p = { calls: new Map(), spentUnits: new Map() };
        this.#periods.set(period, p);
      }
      add(p.calls, api, fn, 1);
      if (chargedUnits > 0) add(p.spentUnits, api, fn, chargedUnits);
    }
  }

  /** Usage of the period named by `dayOf` or `minuteOf`; empty when nothing was called. */
  period(name: string): PeriodUsage {
    return this.#periods.get(name) ?? { calls: new Map(), spentUnits: new Map() };
  }
}

/** `yyyy-MM-dd` (UTC), the `value` of a day period. */
export function dayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** `yyyy-MM-dd HH:mm` (UTC), the `value` of a minute period. */
export function minuteOf(at: Date): string {
  return at.toISOString().slice(0, 16).replace('T', ' ');
}

function add(map: Map<string, Map<string, number>>, api: string, fn: string, n: number): void {
  let inner = map.get(api);
  if (!inner) {
    inner = new Map();
    map.set(api, inner);
  }
  inner.set(fn, (inner.get(fn) ?? 0) + n);
}
