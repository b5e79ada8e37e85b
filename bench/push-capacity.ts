// `npx tsx bench/push-capacity.ts [--tasks 5000] [--depth 100] [--concurrency 32] [--sender prebuilt|at-send] [--ready-after ms]`:
// how many postbacks a second the receiver takes (src/collect/callback-server.ts and the push
// collector, src/collect/push-collect.ts), when the service sends them as fast as it answers.
//   collect.push_capacity_per_s   postbacks landed, loaded and marked collected per second   (target >= 300)
//   collect.push_cpu_s_per_1000   the run process's CPU seconds per 1,000 of them, beside it
// A SERP pipeline of --tasks keywords at --depth (100: the spec's largest answer of one block
// set) runs by push through `runPipeline` against the emulator in its own process, with no rate
// limits and every task done --ready-after ms after its POST: posting ends before the first task
// is done, so the span measured is the receiver's alone. The emulator then sends the finished
// tasks' postbacks (gzip, the task_get envelope, as the spec shapes them) with at most
// --concurrency under way, the next as soon as one is answered.
// How the sender works: with --sender prebuilt (the default), the emulator builds each task's
// postback body (its result, the JSON envelope, gzip) in its idle turns after the POST, as it
// will send it when the task is done (src/sandbox/postback-body.ts, `prebuildPostbacks`), and
// at the send only writes those bytes: the span measures the receiver, not the emulator's
// result building and gzip, which share the same two cores. The ready delay (default
// 10 ms a task, at least 5 s) leaves it the time; the bench prints how many bodies went out
// prebuilt. With --sender at-send, each body is built and gzipped when it is sent (the
// emulator's default), one a turn of its event loop. The span runs from the first
// task done (first POST + ready delay) to the last task marked collected; CPU is this process's
// over the same span (sampled every 100 ms), split into its main thread and the rest (DuckDB,
// libuv's pool, GC), with the emulator's process beside it (read from /proc). "Every answer within 10 s": the emulator's own
// callback timeout (10 s at time scale 1) failed none (`callbacks failed` below is 0).
// The run's event loop delay (p50, p99, max) says how long a turn of its main thread kept the postbacks
// waiting. Figures, not assertions; the load average is printed beside them.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pino from 'pino';
import { parsePipeline } from '../src/config/index.js';
import { runPipeline } from '../src/run/index.js';
import { withWarehouse } from '../src/warehouse/index.js';
import { cpuSampler, flag, loadAverage, spawnEmulator } from './lib/spawn-emulator.js';

const TASKS = Number(flag('tasks', '5000'));
const DEPTH = Number(flag('depth', '100'));
const CONCURRENCY = Number(flag('concurrency', '32'));
const SENDER = flag('sender', 'prebuilt');
if (SENDER !== 'prebuilt' && SENDER !== 'at-send') throw new Error(`--sender ${SENDER}: prebuilt or at-send`);
const READY_AFTER_MS = Number(flag('ready-after', String(Math.max(5_000, TASKS * (SENDER === 'prebuilt' ? 10 : 3)))));
const KEY = 'svc_live_test_pushcapacity';

const keywords = Array.from({ length: TASKS }, (_, i) => `push capacity keyword ${i}`);
const pipeline = parsePipeline(
  [
    'name: push-capacity',
    'collection:',
    '  mode: push',
    '  listen: "127.0.0.1:0"',
    'jobs:',
    '  - kind: serp',
    `    depth: ${DEPTH}`,
    '    locations: [2840]',
    `    keywords: [${keywords.map((k) => JSON.stringify(k)).join(', ')}]`,
  ].join('\n'),
  'push-capacity.yaml',
  {},
);

const loadBefore = await loadAverage();
const sb = await spawnEmulator({
  rateLimits: false,
  readyAfterMs: READY_AFTER_MS,
  seed: 1,
  callbackConcurrency: CONCURRENCY,
  prebuildPostbacks: SENDER === 'prebuilt',
});
const dir = await mkdtemp(join(tmpdir(), 'pipeline-push-capacity-'));
const cpu = cpuSampler();
const threads = threadSampler(sb.pid);
// How long the run's main thread kept a turn: a postback waits for the turn before it to end.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
try {
  const started = performance.now();
  const summary = await runPipeline({
    pipeline,
    file: 'push-capacity.yaml',
    warehouseDir: dir,
    baseUrl: sb.url,
    apiKey: KEY,
    logger: pino({ level: 'warn' }),
    pollIntervalMs: 1_000,
    collectTimeoutMs: 60 * 60_000,
  });
  const wallS = (performance.now() - started) / 1000;
  loopDelay.disable();
  cpu.stop();
  threads.stop();
  const end = await sb.stop();
  const span = await withWarehouse(dir, async (wh) => {
    const [r] = await wh.all<{
      first_post: number;
      last_post: number;
      last_landed: number;
      last_collected: number;
      collected: number;
      rows: number;
    }>(
      `SELECT epoch_ms(min(posted_at))::DOUBLE AS first_post, epoch_ms(max(posted_at))::DOUBLE AS last_post,
              (SELECT epoch_ms(max(received_at))::DOUBLE FROM raw_responses WHERE path LIKE '%/task_get/%') AS last_landed,
              epoch_ms(max(collected_at))::DOUBLE AS last_collected,
              count(*) FILTER (WHERE state = 'collected')::INT AS collected,
              (SELECT count(*) FROM serp_results)::INT AS rows
       FROM tasks`,
    );
    return r!;
  });
  const from = span.first_post + READY_AFTER_MS;
  const spanS = (span.last_collected - from) / 1000;
  const cpuS = cpu.at(span.last_collected) - cpu.at(from);
  const split = threads.between(from, span.last_collected);
  const perK = (s: number) => ((s / span.collected) * 1000).toFixed(2);
  const postingS = (span.last_post - span.first_post) / 1000;
  console.log(
    `push capacity, ${TASKS.toLocaleString('en-US')} SERP tasks at depth ${DEPTH}, postbacks at most ${CONCURRENCY} under way, bodies built ${SENDER === 'prebuilt' ? 'ahead' : 'at each send'} (Node ${process.version})`,
  );
  console.log(
    `  run ${summary.state}, ${summary.tasks.collected}/${summary.tasks.planned} collected (${span.collected} in tasks, ${span.rows} serp_results rows), wall ${wallS.toFixed(1)} s`,
  );
  console.log(
    `  posting took ${postingS.toFixed(1)} s${postingS * 1000 > READY_AFTER_MS ? ' (longer than the ready delay: raise --ready-after, the span is not the receiver alone)' : ''}; receiving ${spanS.toFixed(1)} s, of which the last postback landed at ${((span.last_landed - from) / 1000).toFixed(1)} s`,
  );
  console.log(
    `  callbacks delivered ${end.stats.callbacks.delivered}, failed ${end.stats.callbacks.failed}; bodies sent prebuilt ${end.stats.postback_bodies.prebuilt}, built at send ${end.stats.postback_bodies.built_at_send}${SENDER === 'prebuilt' && end.stats.postback_bodies.built_at_send > 0 ? ' (prebuilding had not finished: raise --ready-after)' : ''}; emulator process ${end.cpuS.toFixed(1)} s of CPU`,
  );
  console.log(
    `  CPU s per 1,000 over the span: run process ${perK(cpuS)} (main thread ${perK(split.main)}, other threads ${perK(split.others)}), emulator ${perK(split.child)}`,
  );
  const ms = (ns: number) => (ns / 1e6).toFixed(1);
  console.log(
    `  the run's event loop delay over the run: p50 ${ms(loopDelay.percentile(50))} ms, p99 ${ms(loopDelay.percentile(99))} ms, max ${ms(loopDelay.max)} ms`,
  );
  console.log(`  load average before ${loadBefore}, after ${await loadAverage()}`);
  console.log(`collect.push_capacity_per_s ${(span.collected / spanS).toFixed(0)}`);
  console.log(`collect.push_cpu_s_per_1000 ${((cpuS / span.collected) * 1000).toFixed(2)}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}

/**
 * CPU seconds from /proc every 100 ms: this process's main thread, its other threads (DuckDB,
 * libuv's pool, GC), and the process `pid` (the emulator), so a span can be charged each.
 */
function threadSampler(pid: number): {
  stop: () => void;
  between: (fromMs: number, toMs: number) => { main: number; others: number; child: number };
} {
  const ticks = (path: string) => {
    const stat = readFileSync(path, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, in clock ticks of 1/100 s
  };
  const samples: Array<{ t: number; main: number; all: number; child: number }> = [];
  const take = () => {
    let all = 0;
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        all += ticks(`/proc/self/task/${tid}/stat`);
      } catch {
        // A thread that ended between the listing and the read.
      }
    }
    let child = samples.at(-1)?.child ?? 0;
    try {
      child = ticks(`/proc/${pid}/stat`);
    } catch {
      // The emulator has ended: its last reading stands.
    }
    samples.push({ t: Date.now(), main: ticks(`/proc/self/task/${process.pid}/stat`), all, child });
  };
  take();
  const timer = setInterval(take, 100);
  const at = (ms: number) => samples.reduce((best, s) => (Math.abs(s.t - ms) < Math.abs(best.t - ms) ? s : best));
  return {
    stop: () => clearInterval(timer),
    between: (fromMs, toMs) => {
      const [a, b] = [at(fromMs), at(toMs)];
      return { main: b.main - a.main, others: b.all - b.main - (a.all - a.main), child: b.child - a.child };
    },
  };
}
