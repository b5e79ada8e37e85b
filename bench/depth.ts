// `npx tsx bench/depth.ts [--nights 60] [--keywords 1000] [--mixes typical,strong,weak] [--competitors yes|no]
//  [--adaptive-depth auto] [--max-depth 100] [--margin 2] [--sweep-every 14] [--competitor-depth 30] [--seed 1] [--start 2026-01-01] [--time-scale 600] [--jobs 2]`:
// what adaptive depth (issue 46, `depth: auto`) saves and what it misses, night after night, against buying depth 100.
// Each arm is a season of nights of one SERP job (the keywords, location 2840, en, desktop, engA organic, pull) into
// its own warehouse, every night a whole `runPipeline` (plan, post, collect, load, models, publish) against an
// in-process emulator whose clock is set to the night's date (bench/lib/serp-nights.ts); the run reads the same clock.
// Both arms of a comparison use the same seed, rank profiles and dates, so they are asked about the same SERPs.
// The emulator's rate limits are off; its ready delay and the client's rate-limit window are divided by the time
// scale (600: the spec's 60 SERP calls a minute become 60 in 100 ms), so a night is bound by CPU.
// Keywords have four words: the emulator refunds unused depth only for keywords of seven words or more, so the
// fixed arm's CNY is the rate card's depth-100 price.
//
// How the tracked domains rank (the emulator's rank profiles, src/sandbox/rank-walk.ts): a profiled domain's rank in
// each series walks from day to day (little moves, a jump now and then, entries into and exits from the top 100)
// around its profile's distribution: on any day about `top10` of its series rank 1-10, `top11to30` 11-30, `beyond100`
// 101-300 (not in the top 100 bought), the rest 31-100. Ranks are organic positions; the bench also prints the
// bands of rank_absolute (features counted) that depth 100 recorded. Three mixes, two tracked domains each, both
// with the mix's profile:
//   typical  0.4 / 0.2 / 0.4      (40% of keywords in the top 10, 20% in 11-30, 40% not in the top 100)
//   strong   0.8 / 0.1 / 0.05     (80% in the top 10)
//   weak     0.03 / 0.07 / 0.6    (10% in the top 30)
// Competitors: your domain (typical) tracked alone, against it with nine competitors (three of each mix) listed in
// `auto_depth.competitors` (followed to competitor_depth, default 30), both adaptive, on the same emulator.
//
// Figures, printed, not asserted:
//   money.adaptive_cost_ratio     CNY of the adaptive nights / CNY of the depth-100 nights, from each warehouse's ledger
//                                 (net of refunds), per mix (target <= 0.30 for the typical site)
//   money.missed_tracked_ranks    tracked (keyword, domain, night) placements depth 100 recorded that the adaptive
//                                 nights did not, by what the adaptive arm knew the night before: seen the night
//                                 before (target 0), a new entry into the top 100, in the top 100 but unseen since it
//                                 entered, or the first night; then each entry into the top 100 and how many nights
//                                 the adaptive arm took to see it (at most the sweep interval)
//   money.competitor_cost_ratio   CNY adaptive with 10 tracked domains / CNY with 1 (target <= 1.5)
// `--adaptive-depth N` runs the "adaptive" arms at a fixed depth N instead of `depth: auto`: with 100 every arm runs
// against its own copy (ratio 1.00, nothing missed), which checks the night loop and the comparison SQL where
// `depth: auto` does not parse. The full run is 8 arms of 60 nights of 1,000 keywords (480 nights). Each arm runs in
// its own process with its own emulator, `--jobs` (2) at a time, and the figures are read from their warehouses when
// all are done; `--jobs 1` runs them one after another in this process. The emulator holds the parameters of every
// task but the built results of only the last thousand (src/sandbox/task-store.ts), so an arm's memory stays flat
// over the season: each night prints the arm's rss, the end the peak rss of any one process and the CPU of all.
// BENCH_KEEP=1 keeps the warehouses and prints their folder.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePipeline } from '../src/config/index.js';
import { AUTO_DEPTH_DEFAULTS } from '../src/jobs/index.js';
import type { RankProfile } from '../src/sandbox/index.js';
import { armCost, entrySightings, missedRanks, rankBands, withArms, type ArmCost, type Entries, type Misses } from './lib/depth-figures.js';
import { runNights } from './lib/serp-nights.js';

const argv = process.argv.slice(2);
if (argv.includes('--help')) {
  process.stdout.write(
    'npx tsx bench/depth.ts [--nights 60] [--keywords 1000] [--mixes typical,strong,weak] [--competitors yes|no]\n' +
      '  [--adaptive-depth auto|N] [--max-depth 100] [--margin 2] [--sweep-every 14] [--competitor-depth 30] [--seed 1] [--start 2026-01-01] [--time-scale 600] [--jobs 2]\n' +
      'Prints money.adaptive_cost_ratio, money.missed_tracked_ranks and money.competitor_cost_ratio (see the comment at the top).\n',
  );
  process.exit(0);
}
const opt = (name: string, dflt: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1]! : dflt);
const NIGHTS = Number(opt('nights', '60'));
const KEYWORDS = Number(opt('keywords', '1000'));
const MIXES = opt('mixes', 'typical,strong,weak')
  .split(',')
  .filter((m) => m && m !== 'none');
const COMPETITORS = opt('competitors', 'yes') !== 'no';
const ADAPTIVE = opt('adaptive-depth', 'auto');
const AUTO = {
  max_depth: Number(opt('max-depth', String(AUTO_DEPTH_DEFAULTS.max_depth))),
  margin: Number(opt('margin', String(AUTO_DEPTH_DEFAULTS.margin))),
  sweep_every: Number(opt('sweep-every', String(AUTO_DEPTH_DEFAULTS.sweep_every))),
  competitor_depth: Number(opt('competitor-depth', String(AUTO_DEPTH_DEFAULTS.competitor_depth))),
};
const SEED = Number(opt('seed', '1'));
const START = opt('start', '2026-01-01');
const SCALE = Number(opt('time-scale', '600'));
const JOBS = Math.max(1, Number(opt('jobs', '2')));
const KEY = 'svc_live_testdepthbench';

const PROFILES: Record<string, RankProfile> = {
  typical: { top10: 0.4, top11to30: 0.2, beyond100: 0.4 },
  strong: { top10: 0.8, top11to30: 0.1, beyond100: 0.05 },
  weak: { top10: 0.03, top11to30: 0.07, beyond100: 0.6 },
};
for (const m of MIXES) if (!PROFILES[m]) throw new Error(`unknown mix '${m}'; accepted: ${Object.keys(PROFILES).join(', ')}`);
const OWN = ['site-a.example', 'site-b.example'];
const RIVALS = Array.from({ length: 9 }, (_, i) => `rival${i + 1}.example`);
const rivalMix = (i: number) => ['strong', 'typical', 'weak'][i % 3]!;

/** The job's YAML: depth 100, or the adaptive arm's `depth: auto` (or `--adaptive-depth N`). */
function pipelineYaml(name: string, depth: 'fixed' | 'adaptive', tracked: string[], competitors: string[] = []): string {
  const keywords = Array.from({ length: KEYWORDS }, (_, i) => `depth bench keyword ${i}`);
  const auto = depth === 'adaptive' && ADAPTIVE === 'auto';
  return [
    `name: ${name}`,
    'jobs:',
    '  - kind: serp',
    '    name: ranks',
    `    depth: ${depth === 'fixed' ? 100 : ADAPTIVE}`,
    ...(auto
      ? [
          `    auto_depth: { max_depth: ${AUTO.max_depth}, margin: ${AUTO.margin}, sweep_every: ${AUTO.sweep_every}` +
            (competitors.length ? `, competitors: [${competitors.join(', ')}], competitor_depth: ${AUTO.competitor_depth} }` : ' }'),
        ]
      : []),
    '    locations: [2840]',
    '    languages: [en]',
    '    devices: [desktop]',
    '    collect: pull',
    `    track_domains: [${tracked.join(', ')}]`,
    `    keywords: [${keywords.join(', ')}]`,
    '',
  ].join('\n');
}

/** One arm's nights into `dir`, with a line per night on stderr. */
async function arm(label: string, dir: string, yaml: string, rankProfiles: Record<string, RankProfile>): Promise<number> {
  const t0 = performance.now();
  await runNights({
    yaml,
    warehouseDir: dir,
    start: START,
    nights: NIGHTS,
    seed: SEED,
    rankProfiles,
    timeScale: SCALE,
    apiKey: KEY,
    onNight: (n, date, s, ms) =>
      process.stderr.write(
        `  ${label} night ${n + 1}/${NIGHTS} ${date}: ${s.tasks.collected.toLocaleString('en-US')} tasks, ${Number(s.chargedCny).toFixed(4)} CNY, ${(ms / 1000).toFixed(1)} s, rss ${mb(process.memoryUsage.rss())} MB\n`,
      ),
  });
  return (performance.now() - t0) / 1000;
}

/** An arm: a season of one job into its own warehouse, named for the child process that runs it. */
interface ArmSpec {
  label: string;
  yaml: string;
  profiles: Record<string, RankProfile>;
}

function armSpec(name: string): ArmSpec {
  if (name === 'competitors-1' || name === 'competitors-10') {
    const profiles = Object.fromEntries([[OWN[0]!, PROFILES.typical!], ...RIVALS.map((d, i) => [d, PROFILES[rivalMix(i)]!])]);
    const tracked = name === 'competitors-1' ? [OWN[0]!] : [OWN[0]!, ...RIVALS];
    const yaml = pipelineYaml('depth-competitors', 'adaptive', tracked, tracked.slice(1));
    return { label: `${tracked.length} tracked`, yaml, profiles };
  }
  const [mix, kind] = name.split(':') as [string, 'fixed' | 'adaptive'];
  const p = PROFILES[mix];
  if (!p || (kind !== 'fixed' && kind !== 'adaptive')) throw new Error(`unknown arm '${name}'`);
  return { label: `${mix} ${kind}`, yaml: pipelineYaml(`depth-${mix}`, kind, OWN), profiles: Object.fromEntries(OWN.map((d) => [d, p])) };
}

interface ArmRun {
  seconds: number;
  peakRssMb: number;
  cpuS: number;
}

/** One arm in a child process (`--arm NAME --arm-dir DIR`, the other flags passed on): its line of figures on stdout. */
function armInChild(name: string, dir: string): Promise<ArmRun> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...argv, '--arm', name, '--arm-dir', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ArmRun) : reject(new Error(`arm ${name} exited ${code}`)),
    ),
  );
}

/** Runs the named arms into root/<name>, JOBS at a time (each its own process and emulator; 1: in this process). */
async function runArms(root: string, names: string[]): Promise<Map<string, ArmRun>> {
  const done = new Map<string, ArmRun>();
  const queue = [...names];
  const failed: unknown[] = [];
  const worker = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      const dir = join(root, name.replace(':', '-'));
      try {
        if (JOBS === 1) {
          const a = armSpec(name);
          done.set(name, { seconds: await arm(a.label, dir, a.yaml, a.profiles), peakRssMb: 0, cpuS: 0 });
        } else done.set(name, await armInChild(name, dir));
      } catch (err) {
        // No new arm starts; the running ones finish before the caller removes their folder.
        failed.push(err);
        queue.length = 0;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(JOBS, names.length) }, worker));
  if (failed.length > 0) throw failed[0];
  return done;
}

const mb = (bytes: number) => Math.round(bytes / 1048576);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const cny = (x: number) => `${x.toFixed(4)} CNY`;
const bought = (a: ArmCost) =>
  `${a.tasks.toLocaleString('en-US')} tasks (depth ${a.byDepth.map((d) => `${d.depth}: ${d.tasks}`).join(', ')}${
    a.byReason.length ? `; ${a.byReason.map((r) => `${r.reason}: ${r.tasks}`).join(', ')}` : ''
  })`;

function describeMisses(m: Misses, e: Entries): string {
  const n = e.nightsToSee;
  const later = n.length
    ? `seen later ${n.length} (nights to see: median ${n[Math.floor((n.length - 1) / 2)]}, mean ${(n.reduce((x, y) => x + y, 0) / n.length).toFixed(1)}, max ${n.at(-1)})`
    : 'seen later 0';
  return [
    `${m.missed} of ${m.recorded.toLocaleString('en-US')} recorded by depth 100:`,
    `seen by the adaptive arm the night before ${m.seenNightBefore} (target 0), new entries ${m.newEntry}, unseen since entering ${m.unseenSince}, first night ${m.firstNight};`,
    `entries into the top 100 after the first night ${e.entries}: seen the same night ${e.seenSameNight}, ${later}, left before seen ${e.leftUnseen}, unseen at the end ${e.unseenAtEnd}`,
  ].join(' ');
}

// Check the adaptive job parses before any night runs.
try {
  parsePipeline(pipelineYaml('check', 'adaptive', OWN), 'bench.yaml', {});
} catch (err) {
  console.error(
    `the adaptive arm's job does not parse (${ADAPTIVE === 'auto' ? '`depth: auto` is not in this build; ' : ''}${(err as Error).message.split('\n').slice(0, 3).join(' ')}); ` +
      '`--adaptive-depth 100` runs the bench with both arms at depth 100, a check of the night loop and the comparison SQL',
  );
  process.exit(2);
}

if (argv.includes('--arm')) {
  const a = armSpec(opt('arm', ''));
  const seconds = await arm(a.label, opt('arm-dir', ''), a.yaml, a.profiles);
  const cpu = process.cpuUsage();
  const run: ArmRun = { seconds, peakRssMb: mb(process.resourceUsage().maxRSS * 1024), cpuS: (cpu.user + cpu.system) / 1e6 };
  process.stdout.write(`${JSON.stringify(run)}\n`);
  process.exit(0);
}

const root = await mkdtemp(join(tmpdir(), 'pipeline-bench-depth-'));
try {
  console.log(
    `depth bench: ${NIGHTS} nights from ${START}, ${KEYWORDS.toLocaleString('en-US')} keywords, location 2840, en, desktop, engA organic, pull; ` +
      `emulator seed ${SEED}, time scale ${SCALE}, rate limits off; adaptive arm: depth ${ADAPTIVE}${ADAPTIVE === 'auto' ? `, auto_depth ${JSON.stringify(AUTO)}` : ''} ` +
      `(Node ${process.version}, ${os.cpus().length} cores)`,
  );
  const runs = await runArms(root, [
    ...MIXES.flatMap((m) => [`${m}:fixed`, `${m}:adaptive`]),
    ...(COMPETITORS ? ['competitors-1', 'competitors-10'] : []),
  ]);
  for (const mix of MIXES) {
    const p = PROFILES[mix]!;
    const dirs = { fixed: join(root, `${mix}-fixed`), adaptive: join(root, `${mix}-adaptive`) };
    const [fixedS, adaptiveS] = [runs.get(`${mix}:fixed`)!.seconds, runs.get(`${mix}:adaptive`)!.seconds];
    await withArms(dirs, async (c) => {
      const [f, a] = [await armCost(c, 'fixed'), await armCost(c, 'adaptive')];
      const bands = await rankBands(c, 'fixed');
      console.log(
        `mix ${mix}: ${OWN.join(' and ')}, each ${p.top10} of series in 1-10, ${p.top11to30} in 11-30, ${p.beyond100} beyond 100 (rank profile); ` +
          `depth 100 recorded (rank_absolute): ${bands.map((b) => `${b.band} ${pct(b.share)}`).join(', ')}`,
      );
      console.log(`  depth 100: ${cny(f.cny)}, ${bought(f)}, ${fixedS.toFixed(0)} s`);
      console.log(`  adaptive:  ${cny(a.cny)}, ${bought(a)}, ${adaptiveS.toFixed(0)} s`);
      console.log(`money.adaptive_cost_ratio ${mix} ${(a.cny / f.cny).toFixed(3)}${mix === 'typical' ? ' (target <= 0.30)' : ''}`);
      const misses = await missedRanks(c, 'adaptive', 'fixed');
      console.log(`money.missed_tracked_ranks ${mix} ${describeMisses(misses, await entrySightings(c, 'adaptive', 'fixed'))}`);
    });
  }
  if (COMPETITORS) {
    const dirs = { one: join(root, 'competitors-1'), ten: join(root, 'competitors-10') };
    const [oneS, tenS] = [runs.get('competitors-1')!.seconds, runs.get('competitors-10')!.seconds];
    await withArms(dirs, async (c) => {
      const [one, ten] = [await armCost(c, 'one'), await armCost(c, 'ten')];
      console.log(
        `competitors: ${OWN[0]} (typical) alone, then with ${RIVALS.length} rivals (${RIVALS.map((d, i) => `${d} ${rivalMix(i)}`).join(', ')}) ` +
          `listed in auto_depth.competitors, followed to competitor_depth ${AUTO.competitor_depth}; both adaptive`,
      );
      console.log(`  1 tracked:  ${cny(one.cny)}, ${bought(one)}, ${oneS.toFixed(0)} s`);
      console.log(`  10 tracked: ${cny(ten.cny)}, ${bought(ten)}, ${tenS.toFixed(0)} s`);
      console.log(`money.competitor_cost_ratio ${(ten.cny / one.cny).toFixed(3)} (target <= 1.5)`);
    });
  }
  const cpu = process.cpuUsage();
  const children = [...runs.values()];
  console.log(
    `peak rss ${Math.max(mb(process.resourceUsage().maxRSS * 1024), ...children.map((r) => r.peakRssMb))} MB (of one process; ${JOBS} arms at a time); ` +
      `cpu ${((cpu.user + cpu.system) / 1e6 + children.reduce((x, r) => x + r.cpuS, 0)).toFixed(0)} s; wall ${(performance.now() / 1000).toFixed(0)} s; load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
  );
} finally {
  if (process.env.BENCH_KEEP) console.log(root);
  else await rm(root, { recursive: true, force: true });
}
