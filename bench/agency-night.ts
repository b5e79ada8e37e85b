// `npx tsx bench/agency-night.ts [--tasks 100000] [--time-scale 2] [--depth 10] [--concurrency N]`:
// an agency's night: --tasks SERP keywords at --depth by push, against the emulator in its own
// process with the spec's rate limits on at --time-scale, run as users run it
// (`node bin/pipeline.mjs run --json`, in a child process: settle, post, collect, load, models and
// their tests, publish), and prints:
//   engine.agency_night_ratio   wall of the run / (the bound the rate limits set for posting
//                               + the service's completion time)                  (target <= 1.1)
//   engine.agency_night_rss_mb  peak RSS of the run's process                     (target <= 1,500)
//   engine.agency_night_lost / engine.agency_night_bought_twice                   (target 0 and 0)
// The bound: the SERP family takes 60 calls in any window of a minute divided by the time scale;
// --tasks need ceil(tasks / 100) POSTs, so the last POST goes at the earliest
// floor((posts - 1) / 60) windows after the first, and its tasks are done the emulator's ready
// delay (300 ms, divided by the time scale) later. Push needs no other SERP call. The time scale
// keeps the night in minutes while leaving the receiver the real service's pace: at 2, 100,000
// tasks are 1,000 POSTs over 8 minutes, about 210 postbacks a second.
// Lost: tasks planned and not collected. Bought twice: a tag the emulator created more than one
// task for (its admin stats). --concurrency bounds the postbacks the emulator has under way
// (default 32; 0 for no bound). The spec says a postback is sent as its task completes, and
// nothing of how many a service has out at once. The emulator completes every task of a POST
// the same ready delay after it, so the 60 POSTs of a window finish 6,000 tasks in one tick;
// without a bound all 6,000 postbacks would open at once, which no dispatcher does, and what
// the receiver cannot take within the 10 s (divided by the time scale) it is tried again
// through `errors` + `webhook_resend`. The bound sends each the moment one is answered, and
// each one's 10 s starts when it is sent.
// The bound of the ratio leaves out the run's own start, models and publish, and the receiving
// of the last window's postbacks: at a small --tasks they weigh more than at 100,000.
// BENCH_LOG=<file> keeps the run's log (LOG_LEVEL info, JSON lines).
// Figures, not assertions; CPU seconds of both processes and the load average are printed beside them.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withWarehouse } from '../src/warehouse/index.js';
import { logLines, measurePipeline, runSummary, stepsLine, writeSerpPipeline } from './lib/measure-run.js';
import { flag, loadAverage, spawnEmulator } from './lib/spawn-emulator.js';

const TASKS = Number(flag('tasks', '100000'));
const SCALE = Number(flag('time-scale', '2'));
const DEPTH = Number(flag('depth', '10'));
const CONCURRENCY = Number(flag('concurrency', '32'));
const LIMIT = 60; // SERP family, calls per window (spec, Limits)
const TASKS_PER_POST = 100;
const READY_AFTER_MS = 300; // the emulator's default ready delay, before the time scale
const KEY = 'svc_live_test_agencynight';

const dir = await mkdtemp(join(tmpdir(), 'pipeline-agency-night-'));
const file = join(dir, 'agency.yaml');
await writeSerpPipeline(file, {
  name: 'agency',
  keywords: TASKS,
  keyword: (i) => `agency keyword ${i} near me`,
  depth: DEPTH,
  head: ['collection:', '  mode: push', '  listen: "127.0.0.1:0"'],
});

const loadBefore = await loadAverage();
const sb = await spawnEmulator({
  rateLimits: true,
  timeScale: SCALE,
  readyAfterMs: READY_AFTER_MS,
  seed: 1,
  ...(CONCURRENCY > 0 ? { callbackConcurrency: CONCURRENCY } : {}),
});
try {
  const warehouse = join(dir, 'warehouse');
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: sb.url, LOG_LEVEL: 'info', LOG_FORMAT: 'json' };
  delete env.SVC_SANDBOX_URL;
  delete env.PIPELINE_SANDBOX_DATE;
  const m = await measurePipeline(['run', file, '--warehouse', warehouse, '--json', '--time-scale', String(SCALE), '--new-run'], env);
  if (process.env.BENCH_LOG) await writeFile(process.env.BENCH_LOG, m.stderr);
  const { code, cpuSecs: cpuS, rssMb } = m;
  const wallS = m.secs;
  const end = await sb.stop();
  if (code !== 0) console.log(`  the run exited ${code}: ${m.stderr.slice(-2000)}`);
  const summary = runSummary(m) as { state?: string; tasks?: { planned: number; collected: number } };
  const counts = await withWarehouse(warehouse, async (wh) => {
    const [r] = await wh.all<{ tasks: number; collected: number; results: number }>(
      `SELECT count(*)::INT AS tasks, count(*) FILTER (WHERE state = 'collected')::INT AS collected,
              (SELECT count(DISTINCT task_id) FROM serp_results)::INT AS results FROM tasks`,
    );
    return r!;
  });
  const created = Object.values(end.stats.tasks_created_by_tag);
  const twice = created.filter((c) => c > 1).length;
  const lost = TASKS - counts.collected;
  const posts = Math.ceil(TASKS / TASKS_PER_POST);
  const windowS = 60 / SCALE;
  const boundS = Math.floor((posts - 1) / LIMIT) * windowS + READY_AFTER_MS / SCALE / 1000;
  console.log(
    `agency night, ${TASKS.toLocaleString('en-US')} SERP tasks at depth ${DEPTH} by push, rate limits on at time scale ${SCALE}, postbacks ${CONCURRENCY > 0 ? `at most ${CONCURRENCY}` : 'without bound'} under way (Node ${process.version})`,
  );
  console.log(
    `  run exit ${code}, ${summary.state ?? '?'}; tasks ${counts.tasks}, collected ${counts.collected}, with results ${counts.results}; tags bought ${created.length}, twice ${twice}`,
  );
  console.log(
    `  wall ${wallS.toFixed(1)} s, bound ${boundS.toFixed(1)} s (${posts} POSTs, ${LIMIT} a ${windowS.toFixed(0)} s window); run process ${cpuS.toFixed(1)} s of CPU, emulator process ${end.cpuS.toFixed(1)} s`,
  );
  console.log(
    `  callbacks delivered ${end.stats.callbacks.delivered}, failed ${end.stats.callbacks.failed}; calls ${JSON.stringify(end.stats.calls_by_family)}`,
  );
  console.log(`  phases (s from the start: end, took; peak MB then): ${phasesLine(m)}`);
  console.log(`  steps s: ${stepsLine(summary)}`);
  console.log(`  load average before ${loadBefore}, after ${await loadAverage()}`);
  console.log(`engine.agency_night_ratio ${(wallS / boundS).toFixed(3)}`);
  console.log(`engine.agency_night_rss_mb ${rssMb.toFixed(0)}`);
  console.log(`engine.agency_night_lost ${lost}`);
  console.log(`engine.agency_night_bought_twice ${twice}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}

/** Each ingest phase and step of the run, from its log: when it ended, how long it took, and the RSS peak then. */
function phasesLine(m: Awaited<ReturnType<typeof measurePipeline>>): string {
  const peakAt = m.rss.reduce((a, b) => (b.mb > a.mb ? b : a), { atS: 0, mb: 0 });
  const parts = logLines(m)
    .filter((l) => l.msg === 'ingest phase done' || l.msg === 'step done')
    .map(
      (l) =>
        `${String(l.phase ?? l.step)} ${l.atS.toFixed(1)} (${(Number(l.ms) / 1000).toFixed(1)}; ${String(l.peakMb)}${l.heapMb === undefined ? '' : `, heap ${String(l.heapMb)}`})`,
    );
  return `${parts.join(', ')}; exit ${m.secs.toFixed(1)}; RSS peak ${peakAt.mb.toFixed(0)} MB at ${peakAt.atS.toFixed(1)} s`;
}
