/**
 * A tiny seeded random source. The emulator must give the same SERP for the same seed,
 * task and day on every machine, so it never touches `Math.random`.
 */
export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both ends included. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
}

/**
 * 32-bit hash of the parts (FNV-1a, then a murmur finaliser so that nearby inputs such
 * as consecutive dates spread over the whole range). Used to derive PRNG states.
 */
export function hashParts(...parts: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5;
  const text = parts.map(String).join('\u241f');
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * mulberry32 seeded from a hash of `parts`. Every independent decision (a domain's score
 * on a day, the features of a keyword) gets its own stream, so adding a draw in one place
 * does not shift the data everywhere else.
 */
export function createRng(...parts: ReadonlyArray<string | number>): Rng {
  let a = hashParts(...parts);
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)] as T;
    },
  };
}
