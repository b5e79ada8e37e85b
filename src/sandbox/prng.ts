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

const SEPARATOR = '\u241f';
const FNV_OFFSET = 0x811c9dc5;

/** FNV-1a state after `text`, continuing from state `h`. */
function fnv(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** FNV-1a state of the parts joined with the separator, continuing from `h` (`first`: no separator before the first part). */
function fnvParts(h: number, parts: ReadonlyArray<string | number>, first: boolean): number {
  for (let i = 0; i < parts.length; i++) {
    if (i > 0 || !first) h = fnv(h, SEPARATOR);
    h = fnv(h, String(parts[i]));
  }
  return h;
}

/** The murmur finaliser, so that nearby inputs such as consecutive dates spread over the whole range. */
function finalise(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * 32-bit hash of the parts (FNV-1a, then a murmur finaliser so that nearby inputs such
 * as consecutive dates spread over the whole range). Used to derive PRNG states.
 */
export function hashParts(...parts: ReadonlyArray<string | number>): number {
  return finalise(fnvParts(FNV_OFFSET, parts, true));
}

/** mulberry32's first draw from state `a`. */
function firstDraw(a: number): number {
  let t = (a + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/**
 * `createRng(...prefix, ...rest).next()` for many `rest`s sharing one prefix, with the
 * prefix hashed once: the ranking draws a few numbers per site of the pool for every
 * task, and hashing the keyword again for each site was most of the emulator's CPU.
 */
export function firstDrawAfter(...prefix: ReadonlyArray<string | number>): (...rest: ReadonlyArray<string | number>) => number {
  const h = fnvParts(FNV_OFFSET, prefix, true);
  return (...rest) => firstDraw(finalise(prefix.length === 0 ? fnvParts(h, rest, true) : fnvParts(h, rest, false)));
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
