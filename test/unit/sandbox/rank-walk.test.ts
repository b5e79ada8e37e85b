import { describe, expect, it } from 'vitest';
import { normalCdf, parseRankProfiles, resolveRankProfiles, type RankProfile, type RankProfiles } from '../../../src/sandbox/rank-walk.js';
import { resolveSerpQuery } from '../../../src/sandbox/serp-query.js';
import { rankSites } from '../../../src/sandbox/serp-ranking.js';
import { buildSerpResult } from '../../../src/sandbox/serp-result.js';

// Issue 46: the emulator's ranks move like real ones, reproducible by date.

const DAY0 = Date.UTC(2026, 4, 1, 9, 30);
const dayAt = (d: number) => new Date(DAY0 + d * 86_400_000);

/** Organic rank of each domain's best result (1-based), for one keyword on one day. */
function ranks(seed: number, keyword: string, d: number, depth = 100, profiles?: RankProfiles): Map<string, number> {
  const q = resolveSerpQuery('engA', { keyword, location_code: 2840, depth }, dayAt(d));
  const out = new Map<string, number>();
  rankSites(q, seed, profiles).forEach((r, i) => {
    if (!out.has(r.site.domain)) out.set(r.site.domain, i + 1);
  });
  return out;
}

/** Day-to-day changes of a domain's rank within the top 100 over `days` days. */
function changes(series: Array<number | undefined>) {
  const out = { moves: [] as number[], entries: 0, exits: 0 };
  for (let d = 1; d < series.length; d++) {
    const [a, b] = [series[d - 1], series[d]];
    if (a === undefined && b !== undefined) out.entries++;
    else if (a !== undefined && b === undefined) out.exits++;
    else if (a !== undefined && b !== undefined) out.moves.push(Math.abs(b - a));
  }
  return out;
}

const TYPICAL: RankProfile = { top10: 0.4, top11to30: 0.2, beyond100: 0.4 };
const STRONG: RankProfile = { top10: 0.8, top11to30: 0.1, beyond100: 0.05 };
const WEAK: RankProfile = { top10: 0.03, top11to30: 0.07, beyond100: 0.6 };

describe('the emulator’s ranks walk from day to day', () => {
  it('gives the same SERP for the same seed and date, whatever order the days are asked in', () => {
    const serp = (d: number, seed = 1) =>
      buildSerpResult({ seed, engine: 'engA', params: { keyword: 'trail running shoes', location_code: 2840, depth: 100 }, at: dayAt(d) });
    const days = [0, 1, 2, 30, 364];
    const forward = days.map((d) => serp(d));
    const backward = [...days].reverse().map((d) => serp(d));
    expect(backward.reverse()).toEqual(forward);
    expect(serp(364, 2).items).not.toEqual(forward[4]!.items);
    // a year later the day is computed as cheaply: no walk over the days before it
    const started = performance.now();
    for (let i = 0; i < 20; i++) ranks(1, `kw ${i}`, 3650);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('over 30 days: mostly small moves (0-3), some jumps (10+), and entries into and exits from the top 100', () => {
    let small = 0;
    let all = 0;
    let jumps = 0;
    let entries = 0;
    let exits = 0;
    let movedSeries = 0;
    for (let k = 0; k < 20; k++) {
      const days = Array.from({ length: 31 }, (_, d) => ranks(1, `walk keyword ${k}`, d));
      const domains = new Set(days.flatMap((m) => [...m.keys()]));
      for (const domain of domains) {
        const c = changes(days.map((m) => m.get(domain)));
        small += c.moves.filter((m) => m <= 3).length;
        all += c.moves.length;
        jumps += c.moves.filter((m) => m >= 10).length;
        entries += c.entries;
        exits += c.exits;
        if (c.moves.some((m) => m > 0)) movedSeries++;
      }
    }
    expect(small / all).toBeGreaterThan(0.8);
    expect(jumps).toBeGreaterThan(0);
    expect(entries).toBeGreaterThan(0);
    expect(exits).toBeGreaterThan(0);
    expect(movedSeries).toBeGreaterThan(100);
  });

  it('a domain with a rank profile ranks in the configured shares over 1,000 keywords, on any day', () => {
    for (const profile of [TYPICAL, STRONG, WEAK])
      for (const d of [0, 45]) {
        const profiles = { 'mysite.example': profile };
        const bands = [0, 0, 0, 0];
        for (let k = 0; k < 1000; k++) {
          const r = ranks(7, `profile keyword ${k}`, d, 100, profiles).get('mysite.example');
          bands[r === undefined ? 3 : r <= 10 ? 0 : r <= 30 ? 1 : 2]! += 1;
        }
        const shares = bands.map((n) => n / 1000);
        const want = [profile.top10, profile.top11to30, 1 - profile.top10 - profile.top11to30 - profile.beyond100, profile.beyond100];
        for (let b = 0; b < 4; b++) expect(Math.abs(shares[b]! - want[b]!), `band ${b} of ${JSON.stringify(profile)}`).toBeLessThan(0.04);
      }
  });

  it('a profiled domain’s rank walks too: small moves most days, a jump now and then, entries and exits', () => {
    const profiles = { 'mysite.example': TYPICAL, 'rival.example': STRONG };
    const moves: number[] = [];
    let entries = 0;
    let exits = 0;
    for (let k = 0; k < 100; k++)
      for (const domain of Object.keys(profiles)) {
        const c = changes(Array.from({ length: 31 }, (_, d) => ranks(3, `profiled walk ${k}`, d, 100, profiles).get(domain)));
        moves.push(...c.moves);
        entries += c.entries;
        exits += c.exits;
      }
    expect(moves.filter((m) => m <= 3).length / moves.length).toBeGreaterThan(0.8);
    expect(moves.filter((m) => m >= 10).length).toBeGreaterThan(0);
    expect(entries).toBeGreaterThan(0);
    expect(exits).toBeGreaterThan(0);
  });

  it('keeps depth: a task at depth N holds at most N organic results, the first N of a deeper task, distinct per page of 10', () => {
    const profiles = { 'mysite.example': TYPICAL, 'outdoorgearlab.com': STRONG };
    for (let k = 0; k < 100; k++) {
      const organic = (depth: number) =>
        buildSerpResult({
          seed: 5,
          engine: 'engA',
          params: { keyword: `depth keyword ${k}`, location_code: 2840, depth },
          at: dayAt(k),
          rankProfiles: profiles,
        })
          .items.filter((i) => i.type === 'organic')
          .map((i) => ({ rank: i.rank_group, url: i.url, domain: String(i.domain).replace(/^www\./, '') }));
      const deep = organic(100);
      expect(deep).toHaveLength(100);
      expect(deep.map((i) => i.rank)).toEqual(deep.map((_, i) => i + 1));
      for (const depth of [10, 30]) expect(organic(depth).map((i) => i.url)).toEqual(deep.slice(0, depth).map((i) => i.url));
      for (let p = 0; p < 10; p++) expect(new Set(deep.slice(p * 10, p * 10 + 10).map((i) => i.domain)).size).toBe(10);
      // a profiled domain shows its best page once, at its profile's rank
      expect(deep.filter((i) => i.domain === 'outdoorgearlab.com').length).toBeLessThanOrEqual(1);
      expect(deep.filter((i) => i.domain === 'mysite.example').length).toBeLessThanOrEqual(1);
    }
  });

  it('reads profiles as an object or as text, and refuses shares that do not add up', () => {
    expect(parseRankProfiles('MySite.example=0.4/0.2/0.4, www.rival.example=0.8/0.1/0')).toEqual({
      'mysite.example': TYPICAL,
      'rival.example': { top10: 0.8, top11to30: 0.1, beyond100: 0 },
    });
    expect(resolveRankProfiles({ 'WWW.Mysite.example': TYPICAL })).toEqual({ 'mysite.example': TYPICAL });
    expect(resolveRankProfiles('')).toBeUndefined();
    expect(resolveRankProfiles(undefined)).toBeUndefined();
    expect(() => parseRankProfiles('mysite.example=0.6/0.3/0.3')).toThrow(/summing to at most 1/);
    expect(() => parseRankProfiles('mysite.example=40%')).toThrow(/domain=top10\/top11to30\/beyond100/);
    expect(() => resolveRankProfiles({ 'x.example': { top10: -0.1, top11to30: 0, beyond100: 0 } })).toThrow(/x\.example/);
    expect(normalCdf(0)).toBeCloseTo(0.5, 6);
    expect(normalCdf(1.96)).toBeCloseTo(0.975, 3);
  });
});
