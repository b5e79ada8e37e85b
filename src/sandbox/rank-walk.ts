import { hashParts } from './prng.js';

/**
 * How a domain's rank for one series (keyword, location, language, engine, device) moves
 * from day to day. Each (series, domain) has a latent standard normal `z` per UTC day,
 * the sum of three independent parts, each standard normal on every day:
 * - a slow wander: values drawn every `SMOOTH_DAYS` days and blended between (cos/sin
 *   weights keep the variance 1), so most days move a little;
 * - a level held for a segment of 20-70 days, then drawn afresh: a jump;
 * - a fresh draw each day: the small daily jitter.
 * The day's value is computed from a handful of hashed draws, never from the days before,
 * so any day of any year costs the same and requests in any order see the same SERP.
 * Because `z` is standard normal on every day, a rank drawn through its quantile
 * (`profileRank`) has the configured distribution on every day.
 */
export interface WalkMix {
  /** Weight of the slow wander. */
  smooth: number;
  /** Weight of the held level (its changes are the jumps). */
  jump: number;
  /** Weight of the daily jitter. */
  jitter: number;
}

/** Days between the slow wander's draws. */
const SMOOTH_DAYS = 60;
/** Shortest and longest segment a held level lasts, in days. */
const SEGMENT_DAYS = [20, 70] as const;
const DAY_MS = 86_400_000;

/** The walk of the pool's sites (serp-ranking.ts scales their home rank by it). */
export const POOL_MIX: WalkMix = unitMix(0.92, 0.37);
/** The walk of a domain with a rank profile: little daily jitter, since the profile's sparse classes magnify it. */
export const PROFILE_MIX: WalkMix = unitMix(0.935, 0.35);

/** A mix of the given smooth and jump weights, the jitter taking the rest of the unit variance. */
function unitMix(smooth: number, jump: number): WalkMix {
  return { smooth, jump, jitter: Math.sqrt(Math.max(0, 1 - smooth * smooth - jump * jump)) };
}

/** UTC day number of a `yyyy-mm-dd` day. */
export function dayNumber(day: string): number {
  return Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
}

/**
 * The hash of one (series, domain) walk: `seriesHash` from `seriesWalkHash`, mixed with
 * the domain. Computed once per domain per SERP.
 */
export function walkHash(seriesHash: number, domain: string): number {
  return hashParts(seriesHash, domain);
}

/** The hash of a series' walks for a seed: keyword (lower case), location, language, engine, device. */
export function seriesWalkHash(seed: number, ...series: ReadonlyArray<string | number>): number {
  return hashParts(seed, 'rank-walk', ...series);
}

/** The latent standard normal of a walk on a day. */
export function walkZ(h: number, day: number, mix: WalkMix): number {
  // The slow wander: between checkpoints j and j+1, cos/sin blend of their draws.
  const phase = Math.floor(unit(h, 1, 0) * SMOOTH_DAYS);
  const j = Math.floor((day + phase) / SMOOTH_DAYS);
  const t = ((day + phase - j * SMOOTH_DAYS) / SMOOTH_DAYS) * (Math.PI / 2);
  const smooth = Math.cos(t) * gauss(h, 2, j) + Math.sin(t) * gauss(h, 2, j + 1);
  // The held level: segments of a fixed length per walk, each with its own draw.
  const length = SEGMENT_DAYS[0] + Math.floor(unit(h, 3, 0) * (SEGMENT_DAYS[1] - SEGMENT_DAYS[0] + 1));
  const offset = Math.floor(unit(h, 4, 0) * length);
  const level = gauss(h, 5, Math.floor((day + offset) / length));
  return mix.smooth * smooth + mix.jump * level + mix.jitter * gauss(h, 6, day);
}

/**
 * A tracked domain's rank distribution: shares of series (keyword × location × language ×
 * device) in which it ranks 1-10, 11-30 and beyond 100; the rest rank 31-100. Ranks are
 * spread evenly inside each band (beyond 100: 101-300).
 */
export interface RankProfile {
  top10: number;
  top11to30: number;
  beyond100: number;
}

/** Rank profiles by domain (lower case, without `www.`). */
export type RankProfiles = Readonly<Record<string, RankProfile>>;

/** The deepest rank a profiled domain is placed at (its "beyond 100" band is 101 to this). */
export const PROFILE_DEEPEST = 300;

/** The rank that the latent `z` gives under a profile: its quantile, band by band. */
export function profileRank(profile: RankProfile, z: number): number {
  const u = Math.min(1 - 1e-12, Math.max(0, normalCdf(z)));
  const bands: Array<[share: number, first: number, count: number]> = [
    [profile.top10, 1, 10],
    [profile.top11to30, 11, 20],
    [1 - profile.top10 - profile.top11to30 - profile.beyond100, 31, 70],
    [profile.beyond100, 101, PROFILE_DEEPEST - 100],
  ];
  let below = 0;
  for (const [share, first, count] of bands) {
    if (share > 0 && u < below + share) return first + Math.min(count - 1, Math.floor(((u - below) / share) * count));
    below += share;
  }
  return PROFILE_DEEPEST;
}

/** Checks a profile's shares (each 0-1, summing to at most 1); throws naming the domain. */
export function checkRankProfile(domain: string, p: RankProfile): void {
  const shares = [p.top10, p.top11to30, p.beyond100];
  if (!shares.every((s) => typeof s === 'number' && Number.isFinite(s) && s >= 0 && s <= 1) || shares.reduce((a, b) => a + b, 0) > 1 + 1e-9)
    throw new Error(
      `rank profile of ${domain}: top10, top11to30 and beyond100 must be shares from 0 to 1 summing to at most 1 (got ${shares.join(', ')})`,
    );
}

/**
 * Rank profiles from their text form, `domain=top10/top11to30/beyond100` separated by
 * commas: `mysite.example=0.4/0.2/0.4,rival.example=0.8/0.1/0`.
 */
export function parseRankProfiles(text: string): Record<string, RankProfile> {
  const out: Record<string, RankProfile> = {};
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z0-9.-]+)=([0-9.]+)\/([0-9.]+)\/([0-9.]+)$/i.exec(part);
    if (!m) throw new Error(`rank profile '${part}' is not domain=top10/top11to30/beyond100, e.g. mysite.example=0.4/0.2/0.4`);
    const domain = m[1]!.toLowerCase().replace(/^www\./, '');
    const profile = { top10: Number(m[2]), top11to30: Number(m[3]), beyond100: Number(m[4]) };
    checkRankProfile(domain, profile);
    out[domain] = profile;
  }
  return out;
}

/**
 * The rank profiles an emulator serves: its option as an object or text, domains lower-cased
 * and without `www.`, every share checked. Undefined when none are given.
 */
export function resolveRankProfiles(given: Record<string, RankProfile> | string | undefined): RankProfiles | undefined {
  if (given === undefined) return undefined;
  const out: Record<string, RankProfile> = {};
  for (const [domain, p] of Object.entries(typeof given === 'string' ? parseRankProfiles(given) : given)) {
    const key = domain.toLowerCase().replace(/^www\./, '');
    checkRankProfile(key, p);
    out[key] = { top10: p.top10, top11to30: p.top11to30, beyond100: p.beyond100 };
  }
  return Object.keys(out).length ? out : undefined;
}

/** A uniform [0, 1) draw tied to a walk and an index, for choices beside the walk (where a deeper page sits). */
export function walkUnit(h: number, n: number): number {
  return unit(h, 7, n);
}

/** A uniform [0, 1) draw of a walk, for a stream and an index. */
function unit(h: number, stream: number, n: number): number {
  let x = (h ^ Math.imul(stream, 0x27d4eb2d)) + Math.imul(n | 0, 0x9e3779b9);
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return (x >>> 0) / 4294967296;
}

/** A standard normal draw of a walk (Box-Muller on two uniform draws). */
function gauss(h: number, stream: number, n: number): number {
  const u1 = 1 - unit(h, stream, n);
  const u2 = unit(h, stream + 100, n);
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** The standard normal distribution function (Abramowitz and Stegun 7.1.26; error below 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + y) / 2 : (1 - y) / 2;
}
