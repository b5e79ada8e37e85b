// `npx tsx bench/depth-sim.ts [--nights 60] [--keywords 1000] [--mixes typical,strong,weak,competitors]
//  [--margins 0,2,5,10] [--sweeps 7,10,14] [--max-depth 100] [--seed 1] [--start 2026-01-01]`:
// the figures of bench/depth.ts for many `auto_depth` settings in minutes, not hours, to choose the defaults from.
// It asks the emulator's SERP builder (src/sandbox/serp-result.ts) for each series' depth-100 result of each night, with
// the seed, keywords, rank profiles and dates bench/depth.ts uses, and keeps the tracked domains' best non-paid
// rank_absolute and the least depth whose result holds them (a depth-d result is the depth-100 one cut after its d-th
// organic item; checked on a sample of real depth 10/20/30 builds, mismatches printed). It then plays the nights with
// the product's own rules (chooseDepth and needsEscalation of src/plan/auto-depth.ts) and the rate card's price of a
// depth (1 + 0.75 per further block of 10, in depth-10 tasks), and prints per setting what bench/depth.ts prints:
// the CNY ratio to depth 100, the escalations a night, the misses of a domain seen the night before, and the nights
// an entry into the top 100 took to be seen. No client, warehouse or models: it checks the rules' arithmetic, and
// bench/depth.ts, the whole product against the emulator, is the measure.
import { buildSerpResult } from '../src/sandbox/serp-result.js';
import type { RankProfile } from '../src/sandbox/index.js';
import { resolveRankProfiles } from '../src/sandbox/rank-walk.js';
import { AUTO_DEPTH_DEFAULTS, type AutoDepth } from '../src/jobs/index.js';
import { chooseDepth, escalationDepth, followed, reachOf, nightOf, seriesKey, type SeriesHistory } from '../src/plan/index.js';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1]! : dflt);
const NIGHTS = Number(opt('nights', '60'));
const KEYWORDS = Number(opt('keywords', '1000'));
const MIXES = opt('mixes', 'typical,strong,weak,competitors').split(',');
const MARGINS = opt('margins', '0,2,5,10').split(',').map(Number);
const SWEEPS = opt('sweeps', '7,10,14').split(',').map(Number);
const MAX = Number(opt('max-depth', '100'));
const COMPETITOR_DEPTHS = opt('competitor-depths', '30,100').split(',').map(Number);
const SEED = Number(opt('seed', '1'));
const START = Date.parse(`${opt('start', '2026-01-01')}T02:00:05Z`);

const PROFILES: Record<string, RankProfile> = {
  typical: { top10: 0.4, top11to30: 0.2, beyond100: 0.4 },
  strong: { top10: 0.8, top11to30: 0.1, beyond100: 0.05 },
  weak: { top10: 0.03, top11to30: 0.07, beyond100: 0.6 },
};
const OWN = ['site-a.example', 'site-b.example'];
const RIVALS = Array.from({ length: 9 }, (_, i) => `rival${i + 1}.example`);
const rivalMix = (i: number) => ['strong', 'typical', 'weak'][i % 3]!;
const price = (depth: number) => 1 + 0.75 * (depth / 10 - 1);

/** A tracked domain in one night's depth-100 result: its best rank_absolute, and the least depth that holds it. */
type Seen = Record<string, { rank: number; need: number }>;

function seenIn(items: readonly { type: string; domain?: unknown; rank_absolute: string | number }[], domains: readonly string[]): Seen {
  const out: Seen = {};
  let organic = 0;
  for (const it of items) {
    if (it.type === 'organic') organic++;
    if (it.type === 'paid' || typeof it.domain !== 'string') continue;
    const d = it.domain.toLowerCase().replace(/^www\./, '');
    const rank = Number(it.rank_absolute);
    if (!domains.includes(d)) continue;
    const need = it.type === 'organic' ? organic : organic + 1;
    if (!out[d] || rank < out[d].rank) out[d] = { rank, need };
  }
  return out;
}

/** Every night's view of every series, and how many sampled depth-d builds disagreed with the cut. */
function season(
  profiles: Record<string, RankProfile>,
  domains: readonly string[],
): { nights: Seen[][]; checked: number; mismatches: number } {
  const rankProfiles = resolveRankProfiles(profiles);
  const nights: Seen[][] = [];
  let checked = 0;
  let mismatches = 0;
  for (let n = 0; n < NIGHTS; n++) {
    const at = new Date(START + n * 86_400_000);
    const build = (i: number, depth: number) =>
      buildSerpResult({
        seed: SEED,
        engine: 'engA',
        params: { keyword: `depth bench keyword ${i}`, location_code: 2840, language_code: 'en', device: 'desktop', depth },
        at,
        ...(rankProfiles ? { rankProfiles } : {}),
      }).items;
    nights.push(
      Array.from({ length: KEYWORDS }, (_, i) => {
        const v = seenIn(build(i, MAX), domains);
        if (i % 97 === 0)
          for (const d of [10, 20, 30]) {
            const w = seenIn(build(i, d), domains);
            for (const dom of domains) {
              checked++;
              if (Boolean(w[dom]) !== (v[dom] !== undefined && v[dom].need <= d)) mismatches++;
            }
          }
        return v;
      }),
    );
  }
  return { nights, checked, mismatches };
}

/** The nights of one setting played by the product's rules. */
function play(nights: Seen[][], tracked: readonly string[], s: AutoDepth) {
  const series = new Map<string, SeriesHistory>();
  const unseenSince = new Map<string, number>();
  const nightsToSee: number[] = [];
  let [cost, fixed, escalations, missedSeen, missedBeyond] = [0, 0, 0, 0, 0];
  nights.forEach((night, n) => {
    const tonight = nightOf(new Date(START + n * 86_400_000));
    night.forEach((v, i) => {
      const key = seriesKey(`depth bench keyword ${i}`, 2840, 'en', 'desktop', 'engA');
      const before = series.get(key);
      const choice = chooseDepth(s, tracked, key, { series, night: tonight });
      const within = (d: number) => new Set(tracked.filter((t) => v[t] && v[t].need <= d));
      let depth = choice.depth;
      cost += price(depth);
      fixed += price(MAX);
      const again = escalationDepth(choice, s, within(depth));
      if (again > 0) {
        escalations++;
        cost += price(again);
        depth = again;
      }
      const seen = within(depth);
      for (const t of tracked) {
        const k = `${key}|${t}`;
        if (!v[t]) {
          unseenSince.delete(k);
          continue;
        }
        const entered = n > 0 && !nights[n - 1]![i]![t];
        if (entered && seen.has(t)) nightsToSee.push(0);
        else if (entered) unseenSince.set(k, n);
        else if (seen.has(t) && unseenSince.has(k)) {
          nightsToSee.push(n - unseenSince.get(k)!);
          unseenSince.delete(k);
        }
        const last = before?.seen.find((x) => x.domain === t);
        if (!seen.has(t) && last) {
          if (followed(last, s) && v[t].need <= reachOf(t, s)) missedSeen++;
          else missedBeyond++;
        }
      }
      const deepest = Math.max(before?.deepest ?? 0, depth);
      series.set(key, { lastDate: '', deepest, seen: tracked.filter((t) => seen.has(t)).map((t) => ({ domain: t, rank: v[t]!.rank })) });
    });
  });
  const later = nightsToSee.filter((x) => x > 0);
  return {
    ratio: cost / fixed,
    escalationsPerNight: escalations / nights.length,
    missedSeen,
    missedBeyond,
    maxNightsToSee: Math.max(0, ...later),
  };
}

for (const mix of MIXES) {
  const competitors = mix === 'competitors';
  if (!competitors && !PROFILES[mix]) throw new Error(`unknown mix '${mix}'`);
  const domains = competitors ? [OWN[0]!, ...RIVALS] : OWN;
  const profiles = competitors
    ? Object.fromEntries([[OWN[0]!, PROFILES.typical!], ...RIVALS.map((d, i) => [d, PROFILES[rivalMix(i)]!])])
    : Object.fromEntries(OWN.map((d) => [d, PROFILES[mix]!]));
  const t0 = performance.now();
  const { nights, checked, mismatches } = season(profiles, domains);
  console.log(
    `${mix}: ${NIGHTS} nights x ${KEYWORDS} keywords built in ${((performance.now() - t0) / 1000).toFixed(0)} s; depth-d cut checked on ${checked} domain-results, mismatches ${mismatches}`,
  );
  for (const sweep_every of SWEEPS)
    for (const margin of MARGINS) {
      const s = { ...AUTO_DEPTH_DEFAULTS, max_depth: MAX, margin, sweep_every };
      const f = (r: ReturnType<typeof play>) =>
        `ratio ${r.ratio.toFixed(3)}, escalations a night ${r.escalationsPerNight.toFixed(1)}, missed seen the night before ${r.missedSeen} (and beyond a competitor's competitor_depth ${r.missedBeyond}), nights to see an entry at most ${r.maxNightsToSee}`;
      if (competitors) {
        const one = play(nights, [OWN[0]!], s);
        for (const competitor_depth of COMPETITOR_DEPTHS) {
          const ten = play(nights, domains, { ...s, competitors: RIVALS, competitor_depth });
          console.log(
            `  margin ${margin} sweep_every ${sweep_every} competitor_depth ${competitor_depth}: competitor_cost_ratio ${(ten.ratio / one.ratio).toFixed(3)} (1 tracked: ${f(one)}; 10 tracked: ${f(ten)})`,
          );
        }
      } else console.log(`  margin ${margin} sweep_every ${sweep_every}: ${f(play(nights, OWN, s))}`);
    }
}
