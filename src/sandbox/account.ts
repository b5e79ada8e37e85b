/**
 * The simulated account behind every key: one balance, charged only for `svc_live_`
 * keys. Charging checks and debits in one synchronous step, so a POST is either paid in
 * full or not at all (nothing is created when the balance cannot cover it).
 */
export class SandboxAccount {
  #balanceUnits: number;
  #totalUnits: number;

  /** `totalUnits`: money put on the account so far, when it is restored (state-journal.ts); default `startUnits`. */
  constructor(startUnits: number, totalUnits = startUnits) {
    this.#balanceUnits = startUnits;
    this.#totalUnits = totalUnits;
  }

  /** Money put on the account (starting balance and top-ups), CNY units: `user_data.money.total`. */
  get totalUnits(): number {
    return this.#totalUnits;
  }

  /** Balance in CNY units of 0.0001. */
  get balanceUnits(): number {
    return this.#balanceUnits;
  }

  /**
   * Debits `units` when `live` is true and the balance covers them. Returns the amount
   * actually charged (0 for sandbox keys), or `undefined` when the balance is too low.
   */
  charge(units: number, live: boolean): number | undefined {
    if (!live || units === 0) return 0;
    if (units > this.#balanceUnits) return undefined;
    this.#balanceUnits -= units;
    return units;
  }

  /** Sets the balance and the money put on the account, as read back from the emulator's journal. */
  restore(balanceUnits: number, totalUnits: number): void {
    this.#balanceUnits = balanceUnits;
    this.#totalUnits = totalUnits;
  }

  /** Adds money to the account (a payment): balance and total both rise. */
  topUp(units: number): void {
    if (units <= 0) return;
    this.#balanceUnits += units;
    this.#totalUnits += units;
  }

  /** Credits back part of a charge (unused depth, spec: the difference is refunded to the balance). */
  refund(units: number): void {
    if (units > 0) this.#balanceUnits += units;
  }
}
