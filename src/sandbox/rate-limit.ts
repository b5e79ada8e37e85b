import { FAMILY_PER_MINUTE, type FamilyId } from './spec/index.js';

/** Calls allowed per "minute" for each family; the spec's Limits table by default. */
export type FamilyLimits = Readonly<Record<FamilyId, number>>;

/** The spec's limits (spec/limits.ts `FAMILY_PER_MINUTE`). */
export function specFamilyLimits(): FamilyLimits {
  return { ...FAMILY_PER_MINUTE };
}

/** A refusal: how long until the oldest call in the window leaves it, on the emulator clock. */
export interface RateRefusal {
  family: FamilyId;
  limit: number;
  retryAfterMs: number;
}

/**
 * Sliding-window limits per key and family, read on the injected clock. The window is
 * one minute divided by the time scale, so with `timeScale: 60` a test fills and drains
 * a family's minute in one second. A refused call does not count against the window
 * (the service did not process it).
 */
export class SlidingWindowLimiter {
  readonly #limits: FamilyLimits;
  readonly #windowMs: number;
  readonly #hits = new Map<string, number[]>();

  constructor(limits: FamilyLimits, windowMs: number) {
    this.#limits = limits;
    this.#windowMs = windowMs;
  }

  /** Counts the call if the family has room; otherwise says how long to wait. */
  take(key: string, family: FamilyId, nowMs: number): RateRefusal | undefined {
    const limit = this.#limits[family];
    const id = `${key}\u0000${family}`;
    let hits = this.#hits.get(id);
    if (!hits) {
      hits = [];
      this.#hits.set(id, hits);
    }
    const from = nowMs - this.#windowMs;
    let drop = 0;
    while (drop < hits.length && (hits[drop] as number) <= from) drop++;
    if (drop > 0) hits.splice(0, drop);
    if (hits.length >= limit) {
      const oldest = hits[0] ?? nowMs;
      return { family, limit, retryAfterMs: Math.max(1, oldest + this.#windowMs - nowMs) };
    }
    hits.push(nowMs);
    return undefined;
  }
}
