// `npx tsx bench/night.ts [--keywords 1000] [--nights 365] [--depth 100] [--pairs 1]`: what the 366th night costs against
// the first.
//   warehouse.night_growth_ratio  wall time of one night of a SERP pipeline (pull; the emulator started with
//                                 `pipeline sandbox --date D --time-scale 60`, the run with the same time scale) on a
//                                 warehouse already holding `--nights` such nights, over the same night on an empty
//                                 warehouse (target <= 1.2). Each night is `node bin/pipeline.mjs run` in a child
//                                 process, so it measures the whole run as users get it: settle, post, collect, load,
//                                 models and their tests, publish.
//   warehouse.night_rss_ratio     peak RSS of the same two runs (/usr/bin/time -v, else /proc/<pid>/status VmHWM)
//   warehouse.publish_s           the publishing step of the night on the history, and the files it wrote: from the
//                                 run's --json summary when it reports one (`publish`), else the Parquet files the
//                                 night wrote, timed apart by `pipeline export` of the tables the night touched
// The history: one real night on the emulator (date D - nights), copied in SQL to the nights after it (data dates move
// forward a day a copy, call and run times likewise, ids get a suffix; the raw index and the answers' heads, raw_heads,
// too, so the night's loads look their answers up among a year of them), then `pipeline models run` and `pipeline export`,
// so every table and mart the run publishes holds the whole history before the measured night (date D). The empty
// warehouse runs the same night on a fresh emulator at the same date, so both nights fetch the same data.
// BENCH_KEEP=1 keeps the folder, and a copy of the history as set up (history-before); BENCH_HISTORY_FROM=<that copy>
// measures on it again without the setup (same --keywords, --nights and --depth).
// --pairs N measures N pairs (each on a fresh empty warehouse and a fresh copy of the history) and prints the median
// of each figure with every pair's value: one pair's peak RSS moves by up to 90 MB from run to run (what the ingest's
// garbage holds when its peak comes), so one pair can pass or miss a target by chance.
// Figures, not assertions. CPU seconds (user + system of the run's process) are printed beside wall times: the machine
// is shared, and CPU is less disturbed by the load.
import { spawn, spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Warehouse } from '../src/warehouse/index.js';
import { copyNights } from './lib/copy-nights.js';
import { BIN, measurePipeline as measure, runSummary, stepsLine, writeSerpPipeline, type Measured } from './lib/measure-run.js';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => (argv.includes(`--${name}`) ? Number(argv[argv.indexOf(`--${name}`) + 1]) : dflt);
const KEYWORDS = opt('keywords', 1000);
const NIGHTS = opt('nights', 365);
const DEPTH = opt('depth', 100);
const PAIRS = Math.max(1, opt('pairs', 1));
const SCALE = 60;
const NIGHT = new Date('2026-01-01T00:00:00Z');
const day = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000).toISOString().slice(0, 10);
const KEY = 'svc_sandbox_nightbench1';

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
      'svc_live_testnightbench1',
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

function envFor(url: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_API_KEY: KEY, SVC_SANDBOX_URL: url, LOG_LEVEL: 'warn' };
  delete env.SVC_BASE_URL;
  delete env.PIPELINE_SANDBOX_DATE;
  return env;
}

/** One night of the pipeline on `warehouse` against a fresh emulator at `date`. */
async function night(file: string, warehouse: string, date: string): Promise<Measured & { summary: Record<string, unknown> }> {
  const sb = await sandbox(date);
  try {
    const r = await measure(
      ['run', file, '--warehouse', warehouse, '--json', '--time-scale', String(SCALE), '--poll-interval', '0.25', '--new-run'],
      envFor(sb.url),
    );
    if (r.code !== 0) throw new Error(`the night on ${warehouse} exited with ${r.code}: ${r.stderr.slice(-2000)}`);
    return { ...r, summary: runSummary(r) };
  } finally {
    sb.stop();
  }
}

async function filesUnder(dir: string, since = 0): Promise<number> {
  let n = 0;
  for (const f of await readdir(dir, { recursive: true }).catch(() => [] as string[])) {
    if (!f.endsWith('.parquet')) continue;
    if ((await stat(join(dir, f))).mtimeMs >= since) n++;
  }
  return n;
}

async function tablesIn(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true }).catch(() => []))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

const root = await mkdtemp(join(tmpdir(), 'pipeline-bench-night-'));
try {
  const file = join(root, 'nightly.yaml');
  await writeSerpPipeline(file, {
    name: 'nightly',
    keywords: KEYWORDS,
    keyword: (i) => `keyword ${i} running shoes`,
    depth: DEPTH,
    jobFields: ['    collect: pull'],
  });
  const history = join(root, 'history');
  const empty = join(root, 'empty');
  await mkdir(empty);
  const t0 = performance.now();
  const reuse = process.env.BENCH_HISTORY_FROM;
  if (reuse) {
    // A history this script made before (kept with BENCH_KEEP=1, copied aside before its measured night), copied afresh.
    await cp(reuse, history, { recursive: true });
  } else {
    // The first night of the history, for real, then copied to the others in SQL.
    const first = await night(file, history, day(NIGHT, -NIGHTS));
    await copyNights(history, String(first.summary.runId), NIGHTS);
    // The marts are built over the copied year as a full rebuild (an incremental build of a whole
    // year at once, from the first night's models, outgrows the 4 GB memory limit at 1,000 keywords).
    const models = spawnSync(process.execPath, [BIN, 'models', 'run', '--warehouse', history, '--no-test', '--full-refresh'], {
      encoding: 'utf8',
    });
    if (models.status !== 0) throw new Error(`pipeline models run failed: ${models.stdout.slice(-2000)} ${models.stderr}`);
    const exported = spawnSync(process.execPath, [BIN, 'export', '--warehouse', history], { encoding: 'utf8' });
    if (exported.status !== 0) throw new Error(`pipeline export failed: ${exported.stderr}`);
    if (process.env.BENCH_KEEP) await cp(history, `${history}-before`, { recursive: true });
  }
  const wh = await Warehouse.open(history);
  const [h] = await wh.all<{ nights: number; items: number; rh: number | null }>(
    `SELECT (SELECT count(DISTINCT check_date) FROM serp_results)::INT AS nights, (SELECT count(*) FROM serp_items)::INT AS items,
            (SELECT count(*) FROM duckdb_tables() WHERE table_name = 'rank_history')::INT AS rh`,
  );
  const marts = (
    await wh.all<{ t: string }>(
      `SELECT table_name AS t FROM duckdb_tables() WHERE table_name IN ('rank_history', 'domain_visibility_daily', 'spend_daily', 'search_volume_trends') ORDER BY 1`,
    )
  ).map((r) => r.t);
  wh.close();
  const published = await tablesIn(join(history, 'parquet'));
  const setupS = (performance.now() - t0) / 1000;

  // Further pairs start from the history as set up: a copy put aside before the first measured night.
  const pristine = reuse ?? (PAIRS > 1 ? `${history}-pristine` : undefined);
  if (pristine && !reuse) await cp(history, pristine, { recursive: true });

  const fmt = (m: Measured) =>
    `${m.secs.toFixed(2).padStart(7)} s  cpu ${m.cpuSecs.toFixed(1).padStart(6)} s  peak RSS ${Math.round(m.rssMb)} MB`;
  console.log(
    `one night of ${KEYWORDS.toLocaleString('en-US')} keywords at depth ${DEPTH} (pull, emulator time scale ${SCALE}x), Node ${process.version}; ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; ${PAIRS} pair${PAIRS > 1 ? 's' : ''}`,
  );
  console.log(
    `  history: ${h!.nights} nights, ${h!.items.toLocaleString('en-US')} serp_items rows; marts ${marts.join(', ') || 'none'}; published tables ${published.join(', ')} (set up in ${setupS.toFixed(0)} s)`,
  );
  const steps = (m: { summary: Record<string, unknown> }) =>
    stepsLine(m.summary) +
    `; slowest models ${((m.summary.models as { slowest?: { name: string; mode: string; ms: number }[] } | undefined)?.slowest ?? [])
      .map((x) => `${x.name} ${x.mode} ${(x.ms / 1000).toFixed(2)}`)
      .join(', ')}`;

  const pairs: { growth: number; cpu: number; rss: number; publishS: number; publish: string }[] = [];
  for (let i = 0; i < PAIRS; i++) {
    if (i > 0) {
      await rm(history, { recursive: true, force: true });
      await cp(pristine!, history, { recursive: true });
      await rm(empty, { recursive: true, force: true });
      await mkdir(empty);
    }
    // The measured nights, the empty warehouse first, at the same date.
    const a = await night(file, empty, day(NIGHT, 0));
    const startedHistory = Date.now();
    const b = await night(file, history, day(NIGHT, 0));
    const written = await filesUnder(join(history, 'parquet'), startedHistory);

    // Publishing: from the summary when the run reports it, else the end-of-run export timed apart.
    const pub = (b.summary.published ?? b.summary.publish) as { ms?: number; seconds?: number; files?: number } | undefined;
    let publishS: number;
    let publish: string;
    if (pub && (pub.ms !== undefined || pub.seconds !== undefined)) {
      publishS = pub.seconds ?? pub.ms! / 1000;
      publish = `${pub.files ?? written} files; from the run's summary`;
    } else {
      const tables = ['runs', 'tasks', 'run_jobs', 'ledger', 'raw_responses', 'serp_results', 'serp_items'];
      const e = await measure(['export', '--warehouse', history, '--table', ...tables], { ...process.env });
      publishS = e.secs;
      publish = `the run reports no publish step: its end-of-run export of ${tables.length} tables timed apart with \`pipeline export --table\`; the night wrote ${written} Parquet files`;
    }
    const tag = PAIRS > 1 ? `pair ${i + 1}  ` : '';
    console.log(`  ${tag}empty warehouse        ${fmt(a)}  (steps s: ${steps(a)})`);
    console.log(`  ${tag}on ${String(NIGHTS).padStart(3)} nights of history ${fmt(b)}  (steps s: ${steps(b)})`);
    pairs.push({ growth: b.secs / a.secs, cpu: b.cpuSecs / a.cpuSecs, rss: b.rssMb / a.rssMb, publishS, publish });
  }
  const median = (xs: number[]) => {
    const o = [...xs].sort((x, y) => x - y);
    return (o[Math.floor((o.length - 1) / 2)]! + o[Math.ceil((o.length - 1) / 2)]!) / 2;
  };
  const each = (xs: number[]) => (PAIRS > 1 ? `; pairs ${xs.map((x) => x.toFixed(2)).join(' ')}` : '');
  const growth = pairs.map((p) => p.growth);
  const cpu = pairs.map((p) => p.cpu);
  const rss = pairs.map((p) => p.rss);
  const publishS = pairs.map((p) => p.publishS);
  console.log(`warehouse.night_growth_ratio ${median(growth).toFixed(2)} (cpu ${median(cpu).toFixed(2)}${each(growth)})`);
  console.log(`warehouse.night_rss_ratio ${median(rss).toFixed(2)}${PAIRS > 1 ? ` (${each(rss).slice(2)})` : ''}`);
  console.log(`warehouse.publish_s ${median(publishS).toFixed(2)} (${pairs[0]!.publish}${each(publishS)})`);
} finally {
  if (!process.env.BENCH_KEEP) await rm(root, { recursive: true, force: true });
  else console.log(root);
}
