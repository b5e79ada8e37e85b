import { FAMILIES, type FamilyId } from '../catalog/index.js';
import { SlidingWindow } from './sliding-window.js';

export interface RateLimiterOptions {
  /** Calls per minute per family, for accounts with higher limits than the spec's. */
  perMinute?: Partial<Record<FamilyId, number>>;
  /** Length of the service's minute; shorter in tests against a time-scaled emulator. */
  windowMs?: number;
  /** Most calls in flight at once per family. */
  concurrency?: number;
  /** Whether a 429 pauses and narrows the family's window (default true). */
  adaptive?: boolean;
  /** Clock in milliseconds (monotonic); injected by tests. */
  now?: () => number;
  /** Ends every wait for a slot when it aborts: the waiting calls fail unsent (`ETL_INTERRUPTED`). */
  signal?: AbortSignal;
}

/**
 * One {@link SlidingWindow} per rate-limit family of the spec's Limits table: never more
 * calls in any sliding window than the family allows, and slower for a while after a 429.
 */
export class RateLimiter {
  private readonly windows = new Map<FamilyId, SlidingWindow>();
  private readonly running = new Set<Promise<unknown>>();
  private readonly opts: Required<Pick<RateLimiterOptions, 'windowMs' | 'concurrency'>> & RateLimiterOptions;

  constructor(opts: RateLimiterOptions = {}) {
    this.opts = { windowMs: 60_000, concurrency: 8, ...opts };
  }

  /**
   * Runs `fn` when the family's window has room; its slot is held until a window after
   * `fn` calls `answered()` (or, if it never does, after it settles), or given back at once
   * when `refused(result)` says the server refused the call (429).
   */
  schedule<T>(family: FamilyId, fn: (answered: () => void) => Promise<T>, refused?: (result: T) => boolean): Promise<T> {
    const p = (async () => {
      const window = this.window(family);
      const release = await window.acquire();
      let wasRefused = false;
      let answeredAt: number | undefined;
      try {
        const r = await fn(() => {
          answeredAt ??= window.now();
        });
        wasRefused = refused?.(r) ?? false;
        return r;
      } finally {
        release(wasRefused, answeredAt);
      }
    })();
    this.running.add(p);
    void p.catch(() => {}).finally(() => this.running.delete(p));
    return p;
  }

  /** Reports a 429 of the family, so its window pauses and narrows. */
  penalize(family: FamilyId, retryAfterMs: number | null): void {
    this.window(family).penalize(retryAfterMs);
  }

  /** Calls allowed per window for a family, after overrides. */
  limit(family: FamilyId): number {
    return this.opts.perMinute?.[family] ?? FAMILIES[family].perMinute;
  }

  /** The length of the window the limits count in (the service's minute, or a scaled one). */
  get windowMs(): number {
    return this.opts.windowMs;
  }

  /** Calls of the family that could start now, before the window has to slide. */
  free(family: FamilyId): number {
    return this.window(family).free;
  }

  /** The limit in force now, lowered for a while after a 429. */
  currentLimit(family: FamilyId): number {
    return this.window(family).limit;
  }

  private window(family: FamilyId): SlidingWindow {
    let w = this.windows.get(family);
    if (!w) {
      w = new SlidingWindow({
        limit: this.limit(family),
        windowMs: this.opts.windowMs,
        concurrency: this.opts.concurrency,
        ...(this.opts.now ? { now: this.opts.now } : {}),
        ...(this.opts.adaptive === undefined ? {} : { adaptive: this.opts.adaptive }),
        ...(this.opts.signal ? { signal: this.opts.signal } : {}),
      });
      this.windows.set(family, w);
    }
    return w;
  }

  /** Waits for every scheduled call to finish. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
