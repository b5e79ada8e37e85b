import PQueue from 'p-queue';
import { FAMILIES, type FamilyId } from '../catalog/index.js';

export interface RateLimiterOptions {
  /** Calls per minute per family, for accounts with higher limits than the spec's. */
  perMinute?: Partial<Record<FamilyId, number>>;
  /** Length of the service's minute; shorter in tests against a time-scaled emulator. */
  windowMs?: number;
  /** Most calls in flight at once per family. */
  concurrency?: number;
}

/**
 * One sliding-window queue per rate-limit family. p-queue's `strict` mode counts starts in
 * any rolling window (the default fixed window lets a double burst through at its edge,
 * see notes/measurements.md); a small margin on the interval absorbs clock skew.
 */
export class RateLimiter {
  private readonly queues = new Map<FamilyId, PQueue>();
  private readonly opts: Required<Pick<RateLimiterOptions, 'windowMs' | 'concurrency'>> & RateLimiterOptions;

  constructor(opts: RateLimiterOptions = {}) {
    this.opts = { windowMs: 60_000, concurrency: 8, ...opts };
  }

  /** Runs `fn` when the family's window has room. */
  schedule<T>(family: FamilyId, fn: () => Promise<T>): Promise<T> {
    return this.queue(family).add(fn) as Promise<T>;
  }

  /** Calls allowed per window for a family, after overrides. */
  limit(family: FamilyId): number {
    return this.opts.perMinute?.[family] ?? FAMILIES[family].perMinute;
  }

  private queue(family: FamilyId): PQueue {
    let q = this.queues.get(family);
    if (!q) {
      const margin = Math.max(5, Math.round(this.opts.windowMs * 0.02));
      q = new PQueue({
        concurrency: this.opts.concurrency,
        intervalCap: this.limit(family),
        interval: this.opts.windowMs + margin,
        strict: true,
      });
      this.queues.set(family, q);
    }
    return q;
  }

  /** Waits for every queued call to finish. */
  async idle(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.onIdle()));
  }
}
