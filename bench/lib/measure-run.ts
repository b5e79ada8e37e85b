import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

/** The CLI as users run it. */
export const BIN = resolve('bin/pipeline.mjs');
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** A `node bin/pipeline.mjs` child process, measured. */
export interface Measured {
  secs: number;
  /** User + system seconds of the process (NaN without /usr/bin/time). */
  cpuSecs: number;
  /** Peak RSS: /usr/bin/time's, else the highest VmHWM read while it ran. */
  rssMb: number;
  stdout: string;
  stderr: string;
  code: number;
  /** Epoch ms at which the process was started (log lines' `time` is measured against it). */
  startedAt: number;
  /** The process's RSS, sampled every `sampleMs` while it ran (seconds since the start, MB). */
  rss: Array<{ atS: number; mb: number }>;
}

/**
 * Runs `node bin/pipeline.mjs ...args` and measures its wall time, CPU and peak RSS, sampling
 * its RSS as it goes so a peak can be put in a phase of the run.
 */
export async function measurePipeline(args: string[], env: NodeJS.ProcessEnv, o: { sampleMs?: number } = {}): Promise<Measured> {
  const cmd = TIME ? [TIME, '-f', '@@time %e %U %S %M', process.execPath, BIN, ...args] : [process.execPath, BIN, ...args];
  const startedAt = Date.now();
  const t0 = performance.now();
  const child = spawn(cmd[0]!, cmd.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // /usr/bin/time's child is the node process: its status is read through the process tree.
  let hwm = 0;
  const rss: Measured['rss'] = [];
  const poll = setInterval(() => {
    for (const pid of [child.pid, ...childrenOf(child.pid)]) {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        if (!/^Name:\s+node/m.test(status)) continue;
        const h = /VmHWM:\s+(\d+) kB/.exec(status);
        const r = /VmRSS:\s+(\d+) kB/.exec(status);
        if (h) hwm = Math.max(hwm, Number(h[1]));
        if (r) rss.push({ atS: (performance.now() - t0) / 1000, mb: Number(r[1]) / 1024 });
      } catch {
        /* gone */
      }
    }
  }, o.sampleMs ?? 200);
  const code = await new Promise<number>((ok) => child.once('exit', (c) => ok(c ?? 1)));
  clearInterval(poll);
  const secs = (performance.now() - t0) / 1000;
  const t = /@@time (\S+) (\S+) (\S+) (\d+)/.exec(stderr);
  return {
    secs,
    cpuSecs: t ? Number(t[2]) + Number(t[3]) : Number.NaN,
    rssMb: (t ? Number(t[4]) : hwm) / 1024,
    stdout,
    stderr: stderr.replace(/@@time.*\n?/, ''),
    code,
    startedAt,
    rss,
  };
}

function childrenOf(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The run's `--json` summary: the last line of its stdout ({} when it is not JSON). */
export function runSummary(m: Measured): Record<string, unknown> {
  try {
    return JSON.parse(m.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The run's JSON log lines (stderr at LOG_LEVEL info or lower), with their time since the start. */
export function logLines(m: Measured): Array<{ atS: number; msg: string; [k: string]: unknown }> {
  const out: Array<{ atS: number; msg: string }> = [];
  for (const line of m.stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const o = JSON.parse(line) as { time?: number; msg?: string };
      if (typeof o.time === 'number') out.push({ ...o, atS: (o.time - m.startedAt) / 1000, msg: o.msg ?? '' });
    } catch {
      /* not a log line */
    }
  }
  return out;
}

/** The run's steps as its summary times them: `ingest 12.30, models 4.10, ...; peak MB after ingest 700, ...`. */
export function stepsLine(summary: Record<string, unknown>): string {
  const ms = Object.entries((summary.stepsMs ?? {}) as Record<string, number>)
    .map(([k, v]) => `${k} ${(v / 1000).toFixed(2)}`)
    .join(', ');
  const mb = Object.entries((summary.stepsPeakMb ?? {}) as Record<string, number>)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `${ms}; peak MB after ${mb}`;
}

/** A SERP pipeline file of `keywords` keywords at `depth` on location 2840, tracking two domains. */
export async function writeSerpPipeline(
  file: string,
  o: { name: string; keywords: number; keyword: (i: number) => string; depth: number; head?: string[]; jobFields?: string[] },
): Promise<void> {
  const lines = [
    `name: ${o.name}`,
    ...(o.head ?? []),
    'jobs:',
    '  - kind: serp',
    '    name: ranks',
    `    depth: ${o.depth}`,
    '    locations: [2840]',
    ...(o.jobFields ?? []),
    '    track_domains: [site1.com, site2.com]',
    '    keywords:',
  ];
  for (let i = 0; i < o.keywords; i++) lines.push(`      - ${o.keyword(i)}`);
  lines.push('');
  await writeFile(file, lines.join('\n'));
}
