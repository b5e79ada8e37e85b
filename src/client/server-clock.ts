/**
 * The service's clock as its answers tell it. The spec bounds some request times by the
 * service's "now" (`id_list`: `datetime_from` and `datetime_to` "not after now"; `errors`: "not
 * later than now"), and a client whose clock runs ahead of the service's is refused. Every answer
 * carries the service's `Date` header (RFC 9110: whole seconds, when the answer was made), so
 * each answer bounds the offset between the two clocks: the service's clock read at least
 * `Date` when the answer arrived, and less than `Date` + 1 s when the request left. The bounds of
 * all answers are intersected (a clock that jumped, the answers no longer agreeing, starts over
 * from the latest answer), so `lower(t)` is a time the service's clock has surely reached at our
 * `t`, and `upper(t)` one it has surely not.
 */
export class ServerClock {
  #low: number | null = null;
  #high: number | null = null;

  /** Takes one answer's `Date` header, with when its request left and its answer arrived (our clock, ms). */
  observe(date: string | string[] | undefined, sentAtMs: number, receivedAtMs: number): void {
    const text = Array.isArray(date) ? date[0] : date;
    const at = text ? Date.parse(text) : Number.NaN;
    if (!Number.isFinite(at)) return;
    const low = at - receivedAtMs;
    const high = at + 1000 - sentAtMs;
    if (this.#low === null || this.#high === null || low > this.#high || high < this.#low) {
      this.#low = low;
      this.#high = high;
      return;
    }
    this.#low = Math.max(this.#low, low);
    this.#high = Math.min(this.#high, high);
  }

  /** Whether an answer has told the service's clock yet. */
  get known(): boolean {
    return this.#low !== null;
  }

  /** A time (ms) the service's clock has surely reached when ours reads `localMs`; null before any answer. */
  lower(localMs: number): number | null {
    return this.#low === null ? null : localMs + this.#low;
  }

  /** A time (ms) the service's clock has surely not reached when ours reads `localMs`; null before any answer. */
  upper(localMs: number): number | null {
    return this.#high === null ? null : localMs + this.#high;
  }
}
