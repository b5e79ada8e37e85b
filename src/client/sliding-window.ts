import { EtlError } from '../errors.js';

/** Options of one family's window. */
export interface SlidingWindowOptions {
  /** Calls the server allows in any window. */
  limit: number;
  /** Length of the server's window (a minute, shorter against a time-scaled emulator). */
  windowMs: number;
  /** Most calls in flight at once. */
  concurrency: number;
  /** Whether a 429 pauses and narrows the window (on by default; off only to compare in tests). */
  adaptive?: boolean;
  /** Clock in milliseconds; injected by tests. */
  now?: () => number;
  /** Ends every wait for a slot when it aborts (Ctrl-C): the waiting calls fail unsent, with `ETL_INTERRUPTED`. */
  signal?: AbortSignal;
}

/** What a call waiting for a slot gets when the run is interrupted: it was not sent. */
export function interruptedWait(): EtlError {
  return new EtlError('ETL_INTERRUPTED', 'interrupted while waiting for the rate limit, so the call was not sent', {
    context: { stage: 'client' },
  });
}

/**
 * A sliding-window gate for one rate-limit family that can never let the server count
 * more than `limit` calls in any window, whatever the network does.
 *
 * The server stamps a call somewhere between our send and our receipt of its answer, and
 * we cannot know where. So a call holds its slot from the moment it is sent until
 * `windowMs` after its answer arrived: two calls that share a slot are then at least a
 * window apart at the server however their latencies differ, and a fixed-window edge can
 * never admit a double burst. The cost is one round trip per window (about 0.2% of a
 * minute).
 *
 * On a 429 the gate adapts: it pauses until the `Retry-After` (or a window's share of
 * time) has passed and lowers its own limit towards what the server evidently takes; each
 * window without a 429 gives a tenth of the limit back (additive increase, multiplicative
 * decrease).
 */
export class SlidingWindow {
  private readonly opts: Required<Omit<SlidingWindowOptions, 'signal'>> & Pick<SlidingWindowOptions, 'signal'>;
  /** Times at which finished calls give their slot back. */
  private readonly releases: number[] = [];
  private inFlight = 0;
  private readonly waiters: Array<{ go: () => void; stop: (err: Error) => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private pausedUntil = 0;
  private current: number;
  private lastPenalty = Number.NEGATIVE_INFINITY;
  private limitBeforePenalty: number;
  private lastRecovery = 0;

  constructor(opts: SlidingWindowOptions) {
    if (!(opts.limit >= 1) || !(opts.windowMs > 0)) throw new Error('a window needs limit >= 1 and windowMs > 0');
    this.opts = { now: () => performance.now(), adaptive: true, ...opts };
    this.current = opts.limit;
    this.limitBeforePenalty = opts.limit;
  }

  /** The limit in force now (below the configured one for a while after a 429). */
  get limit(): number {
    return this.current;
  }

  /**
   * Waits for a slot; the returned function gives it back when the call has been answered.
   * A call the server refused (429) gives its slot back at once: it was not served, and the
   * refusal is reported through {@link penalize}.
   */
  async acquire(): Promise<(refused?: boolean, answeredAt?: number) => void> {
    const { signal } = this.opts;
    if (signal?.aborted) throw interruptedWait();
    await new Promise<void>((resolve, reject) => {
      // One `abort` listener for all of this gate's waiters, there only while some wait (as in
      // abortableSleep): a scheduler's signal outlives every night's client.
      if (this.waiters.length === 0) signal?.addEventListener('abort', this.onAbort, { once: true });
      this.waiters.push({ go: resolve, stop: reject });
      this.pump();
    });
    let done = false;
    return (refused = false, answeredAt?: number) => {
      if (done) return;
      done = true;
      this.inFlight--;
      // The slot is free a window after the answer arrived (`answeredAt`, on this gate's
      // clock), not after the caller finished with it: landing the body takes no slot time.
      if (!refused) this.addRelease((answeredAt ?? this.opts.now()) + this.opts.windowMs);
      this.pump();
    };
  }

  /** The gate's clock (for `answeredAt`). */
  now(): number {
    return this.opts.now();
  }

  /** Fails every call still waiting for a slot: none of them was sent. */
  private readonly onAbort = (): void => {
    for (const w of this.waiters.splice(0)) w.stop(interruptedWait());
    this.pump();
  };

  /** Keeps `releases` in time order (answers can be handed back out of order). */
  private addRelease(at: number): void {
    let i = this.releases.length;
    while (i > 0 && this.releases[i - 1]! > at) i--;
    this.releases.splice(i, 0, at);
  }

  /** Tells the gate the server refused a call (429), with its `Retry-After` in ms when given. */
  penalize(retryAfterMs: number | null): void {
    if (!this.opts.adaptive) return;
    const now = this.opts.now();
    const pause = retryAfterMs ?? this.opts.windowMs / Math.max(1, this.current);
    this.pausedUntil = Math.max(this.pausedUntil, now + pause);
    // A burst of 429s from one overshoot is one signal: per window the limit is cut to what
    // the server evidently takes (calls of the window served or in flight), but to no less
    // than half and no more than nine tenths of the limit before the first 429.
    if (now - this.lastPenalty >= this.opts.windowMs) {
      this.limitBeforePenalty = this.current;
      this.lastPenalty = now;
    }
    const before = this.limitBeforePenalty;
    const taken = this.used(now);
    this.current = Math.max(1, Math.floor(before * 0.5), Math.min(Math.floor(before * 0.9), taken));
    this.lastRecovery = now;
    this.pump();
  }

  /** Calls that could start now without waiting for the window to slide. */
  get free(): number {
    const now = this.opts.now();
    this.recover(now);
    return Math.max(0, this.current - this.used(now));
  }

  private used(now: number): number {
    while (this.releases.length > 0 && this.releases[0]! <= now) this.releases.shift();
    return this.releases.length + this.inFlight;
  }

  /** Gives back a tenth of the configured limit per window without a 429. */
  private recover(now: number): void {
    if (this.current >= this.opts.limit) return;
    const windows = Math.floor((now - this.lastRecovery) / this.opts.windowMs);
    if (windows > 0) {
      this.current = Math.min(this.opts.limit, this.current + windows * Math.ceil(this.opts.limit / 10));
      this.lastRecovery += windows * this.opts.windowMs;
    }
  }

  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const now = this.opts.now();
    this.recover(now);
    while (this.waiters.length > 0 && now >= this.pausedUntil && this.inFlight < this.opts.concurrency && this.used(now) < this.current) {
      this.inFlight++; // counted here, so the slot is taken before the waiter even runs
      this.waiters.shift()!.go();
    }
    if (this.waiters.length === 0) {
      this.opts.signal?.removeEventListener('abort', this.onAbort);
      return;
    }
    // Wake when the pause ends or the earliest slot frees; in-flight calls wake us on release.
    const wakeAt = now < this.pausedUntil ? this.pausedUntil : this.inFlight < this.opts.concurrency ? this.releases[0] : undefined;
    if (wakeAt !== undefined && wakeAt > now) this.timer = setTimeout(() => this.pump(), Math.ceil(wakeAt - now) + 1);
  }
}
