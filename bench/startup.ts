// `npx tsx bench/startup.ts [--runs 5] [--keywords 1000] [--nights 365] [--depth 10]`: how long the command takes to
// answer (issue 45), the compiled build (dist/, what `npm ci` installs) beside the sources through tsx
// (PIPELINE_FROM_SOURCE=1, what every start did before), each `node bin/pipeline.mjs ...` in a child process:
//   startup.version_s, startup.help_s   `pipeline --version`, `pipeline --help` (target <= 0.3 s)
//   startup.status_s, startup.ledger_s  `pipeline status` and `pipeline ledger --by day` on a year's warehouse
//                                       (target <= 1 s); `ledger` alone (its default summary of the year) is
//                                       printed too
//   startup.schedule_status_s           `pipeline schedule --status` on that warehouse (target <= 1 s)
// The year's warehouse: one real night of `--keywords` keywords at depth `--depth` against the emulator
// (`pipeline sandbox --time-scale 60`), copied in SQL to `--nights` nights (bench/lib/copy-nights.ts, as the night
// bench builds its history), so runs, tasks and the ledger hold a year of nights.
// Each figure is the median of `--runs` runs; the two paths alternate run by run so both see the same machine. Wall
// seconds beside CPU seconds (user + system of the child, from /usr/bin/time; "-" without it): the machine is
// shared, and CPU is less disturbed by the load. Figures, not assertions. dist/ is built first when not current.
// BENCH_KEEP=1 keeps the year's warehouse (its folder is printed); BENCH_WAREHOUSE=<that folder> measures on it again
// without the setup. BENCH_BASELINE=<another checkout, built> measures its bin/pipeline.mjs (its dist/) in the second
// column instead of the sources through tsx: a change's start-up beside the code before it, on the same machine.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildIsCurrent } from '../bin/source-stamp.mjs';
import { Warehouse } from '../src/warehouse/index.js';
import { copyNights } from './lib/copy-nights.js';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : dflt);
const RUNS = Math.max(1, opt('runs', 5));
const KEYWORDS = opt('keywords', 1000);
const NIGHTS = opt('nights', 365);
const DEPTH = opt('depth', 10);
const SCALE = 60;
const BIN = resolve('bin/pipeline.mjs');
const BASELINE = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE, 'bin/pipeline.mjs') : undefined;
const SECOND = BASELINE ? 'base' : 'tsx';
const KEY = 'svc_sandbox_startupbench1';
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

interface Measured {
  wall: number;
  cpu: number;
  code: number;
  stdoutBytes: number;
  stderr: string;
}

/** `node bin/pipeline.mjs ...args` in a child: wall seconds, CPU seconds of the child, exit code. */
async function measure(args: string[], env: NodeJS.ProcessEnv, bin = BIN): Promise<Measured> {
  const cmd = TIME ? [TIME, '-f', '@@time %U %S', process.execPath, bin, ...args] : [process.execPath, bin, ...args];
  const t0 = performance.now();
  const child = spawn(cmd[0]!, cmd.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdoutBytes = 0;
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdoutBytes += d.length));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number>((ok) => child.once('close', (c) => ok(c ?? 1)));
  const wall = (performance.now() - t0) / 1000;
  const t = /@@time (\S+) (\S+)/.exec(stderr);
  return { wall, cpu: t ? Number(t[1]) + Number(t[2]) : Number.NaN, code, stdoutBytes, stderr: stderr.replace(/@@time.*\n?/, '') };
}

/** `pipeline sandbox --date D --time-scale 60` in a child process, until `stop()`. */
async function sandbox(date: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'sandbox',
      '--port',
      '0',
      '--date',
      date,
      '--time-scale',
      String(SCALE),
      '--sandbox-key',
      KEY,
      '--live-key',
      'svc_live_teststartupbench1',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  const url = await new Promise<string>((ok, fail) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m && err.includes('Ctrl-C')) ok(m[1]!);
    });
    child.once('exit', (code) => fail(new Error(`pipeline sandbox exited with ${code}: ${err}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

/** A warehouse holding `NIGHTS` nights: one real night, copied. */
async function yearWarehouse(root: string): Promise<string> {
  const file = join(root, 'nightly.yaml');
  const keywords = Array.from({ length: KEYWORDS }, (_, i) => `      - keyword ${i} running shoes`);
  await writeFile(
    file,
    [
      'name: nightly',
      'jobs:',
      '  - kind: serp',
      '    name: ranks',
      `    depth: ${DEPTH}`,
      '    locations: [2840]',
      '    collect: pull',
      '    keywords:',
      ...keywords,
      '',
    ].join('\n'),
  );
  const dir = join(root, 'warehouse');
  const sb = await sandbox('2025-01-01');
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_API_KEY: KEY, SVC_SANDBOX_URL: sb.url, LOG_LEVEL: 'warn' };
    delete env.SVC_BASE_URL;
    delete env.PIPELINE_SANDBOX_DATE;
    const r = spawnSync(
      process.execPath,
      [
        BIN,
        'run',
        file,
        '--warehouse',
        dir,
        '--json',
        '--time-scale',
        String(SCALE),
        '--poll-interval',
        '0.25',
        '--new-run',
        '--no-models',
      ],
      { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (r.status !== 0) throw new Error(`the first night exited with ${r.status}: ${r.stderr.slice(-2000)}`);
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!) as { runId: string };
    await copyNights(dir, summary.runId, NIGHTS);
  } finally {
    sb.stop();
  }
  return dir;
}

const median = (xs: number[]) => {
  const o = [...xs].sort((a, b) => a - b);
  return (o[Math.floor((o.length - 1) / 2)]! + o[Math.ceil((o.length - 1) / 2)]!) / 2;
};

if (!buildIsCurrent(resolve('src'), resolve('dist'))) {
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (b.status !== 0) throw new Error('npm run build failed: no build to measure');
}
const root = await mkdtemp(join(tmpdir(), 'pipeline-bench-startup-'));
try {
  const t0 = performance.now();
  const wh = process.env.BENCH_WAREHOUSE ? resolve(process.env.BENCH_WAREHOUSE) : await yearWarehouse(root);
  const w = await Warehouse.open(wh);
  const [size] = await w.all<{ runs: number; tasks: number; ledger: number }>(
    `SELECT (SELECT count(*) FROM runs)::INT AS runs, (SELECT count(*) FROM tasks)::INT AS tasks, (SELECT count(*) FROM ledger)::INT AS ledger`,
  );
  w.close();
  const setupS = (performance.now() - t0) / 1000;

  const cases: { name: string; args: string[]; target?: number }[] = [
    { name: 'pipeline --version', args: ['--version'], target: 0.3 },
    { name: 'pipeline --help', args: ['--help'], target: 0.3 },
    { name: 'pipeline status --help', args: ['status', '--help'], target: 0.3 },
    { name: 'pipeline status', args: ['status', '--warehouse', wh], target: 1 },
    { name: 'pipeline ledger --by day', args: ['ledger', '--warehouse', wh, '--by', 'day'], target: 1 },
    { name: 'pipeline ledger (summary)', args: ['ledger', '--warehouse', wh] },
    { name: 'pipeline schedule --status', args: ['schedule', '--status', '--warehouse', wh], target: 1 },
  ];
  const env = { ...process.env };
  delete env.PIPELINE_FROM_SOURCE;
  const paths = {
    dist: { env, bin: BIN },
    tsx: BASELINE ? { env, bin: BASELINE } : { env: { ...env, PIPELINE_FROM_SOURCE: '1' }, bin: BIN },
  };
  // One untimed run of each path first: tsx's compile cache and the OS's file cache warm, as on a machine in use.
  for (const p of Object.values(paths)) await measure(['--version'], p.env, p.bin);

  console.log(
    `startup: node bin/pipeline.mjs in a child, median of ${RUNS} runs a path (dist = compiled build, ${BASELINE ? `base = ${BASELINE}` : 'tsx = sources compiled at start'}), Node ${process.version}; ${os.cpus().length} cores, load average ${load()} at the start`,
  );
  console.log(
    `  warehouse: ${size!.runs} runs, ${size!.tasks.toLocaleString('en-US')} tasks, ${size!.ledger.toLocaleString('en-US')} ledger rows (${process.env.BENCH_WAREHOUSE ? process.env.BENCH_WAREHOUSE : `${NIGHTS} nights of ${KEYWORDS} keywords at depth ${DEPTH}; set up in ${setupS.toFixed(0)} s`})`,
  );
  console.log(
    `  ${'command'.padEnd(30)} ${'dist wall'.padStart(9)} ${'cpu'.padStart(6)}  ${`${SECOND} wall`.padStart(9)} ${'cpu'.padStart(6)}  ratio wall   cpu  target`,
  );
  const key = (n: string) =>
    n
      .replace(/^pipeline /, '')
      .replace(/[^a-z]+/g, '_')
      .replace(/^_|_$/g, '');
  for (const c of cases) {
    const got: Record<'dist' | 'tsx', Measured[]> = { dist: [], tsx: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const p of ['dist', 'tsx'] as const) {
        const m = await measure(c.args, paths[p].env, paths[p].bin);
        if (m.code !== 0) throw new Error(`${c.name} (${p}) exited with ${m.code}: ${m.stderr.slice(-2000)}`);
        got[p].push(m);
      }
    }
    const d = { wall: median(got.dist.map((m) => m.wall)), cpu: median(got.dist.map((m) => m.cpu)) };
    const t = { wall: median(got.tsx.map((m) => m.wall)), cpu: median(got.tsx.map((m) => m.cpu)) };
    const cpu = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(2));
    console.log(
      `  ${c.name.padEnd(30)} ${d.wall.toFixed(2).padStart(7)} s ${cpu(d.cpu).padStart(6)}  ${t.wall.toFixed(2).padStart(7)} s ${cpu(t.cpu).padStart(6)}  ${(d.wall / t.wall).toFixed(2).padStart(10)} ${cpu(d.cpu / t.cpu).padStart(5)}  ${c.target !== undefined ? `<= ${c.target} s` : ''}`,
    );
    console.log(
      `    startup.${key(c.name)}_s ${d.wall.toFixed(2)} (runs ${got.dist.map((m) => m.wall.toFixed(2)).join(' ')}; ${SECOND} ${got.tsx.map((m) => m.wall.toFixed(2)).join(' ')})`,
    );
  }
  console.log(`  load average ${load()} at the end`);
} finally {
  if (process.env.BENCH_KEEP) console.log(`kept ${join(root, 'warehouse')}`);
  else await rm(root, { recursive: true, force: true });
}
