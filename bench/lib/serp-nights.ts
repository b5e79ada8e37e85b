import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunSummary } from '../../src/run/index.js';
import { startSandbox, type RankProfile } from '../../src/sandbox/index.js';

// A run of nights of one pipeline against one in-process emulator whose clock is set to each
// night's date in turn (the run reads the same clock), so a season of nights runs in minutes and
// every arm of a comparison sees the SERPs of the same seed and dates. bench/depth.ts compares
// adaptive depth with a fixed depth on it.

/** `yyyy-mm-dd`, `n` days after `start` (a `yyyy-mm-dd`). */
export function dayAfter(start: string, n: number): string {
  return new Date(Date.parse(`${start}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

export interface NightsOptions {
  /** The pipeline file's text; parsed once per night, as a scheduled night reads its file. */
  yaml: string;
  warehouseDir: string;
  /** First night's date (`yyyy-mm-dd`); the nights follow day by day. */
  start: string;
  nights: number;
  /** The emulator's seed and rank profiles (rank-walk.ts): the same for every arm compared. */
  seed: number;
  rankProfiles?: Record<string, RankProfile>;
  /**
   * Divides the emulator's ready delay and the client's rate-limit window (the spec's calls a
   * minute, in a minute / timeScale); the emulator's own limits are off, so a night is bound by CPU.
   */
  timeScale: number;
  /** A live-style key, so the emulator charges and the ledger has the CNY. */
  apiKey: string;
  /** Told after each night. */
  onNight?: (n: number, date: string, summary: RunSummary, wallMs: number) => void;
}

/** A night's outcome as the run reported it. */
export interface NightOutcome {
  date: string;
  summary: RunSummary;
  wallMs: number;
}

/** A clock that starts at `iso` and moves with real time, so tasks still become ready. */
function clockFrom(iso: string): () => Date {
  const start = Date.parse(iso);
  const t0 = performance.now();
  return () => new Date(start + (performance.now() - t0));
}

/**
 * Runs `nights` nights of the pipeline into one warehouse, each a whole `runPipeline` (plan,
 * post, collect, load, models, publish) on the night's date. Throws when a night does not
 * complete: figures over a night that bought only part of its tasks would mislead.
 */
export async function runNights(o: NightsOptions): Promise<NightOutcome[]> {
  let clock = clockFrom(`${o.start}T02:00:00Z`);
  const now = () => clock();
  const sandbox = await startSandbox({
    seed: o.seed,
    now,
    timeScale: o.timeScale,
    balanceCny: '10000000.0000',
    ...(o.rankProfiles ? { rankProfiles: o.rankProfiles } : {}),
  });
  const logger = pino({ level: 'warn' });
  const out: NightOutcome[] = [];
  try {
    for (let n = 0; n < o.nights; n++) {
      const date = dayAfter(o.start, n);
      clock = clockFrom(`${date}T02:00:00Z`);
      const t0 = performance.now();
      const summary = await runPipeline({
        pipeline: parsePipeline(o.yaml, 'bench.yaml', {}),
        file: 'bench.yaml',
        warehouseDir: o.warehouseDir,
        baseUrl: sandbox.url,
        apiKey: o.apiKey,
        logger,
        now,
        newRun: true,
        limits: { windowMs: 60_000 / o.timeScale },
        pollIntervalMs: 20,
        collectTimeoutMs: 30 * 60_000,
      });
      const wallMs = performance.now() - t0;
      if (summary.state !== 'completed')
        throw new Error(`night ${n + 1} (${date}) ended ${summary.state}: ${summary.stopReason ?? ''} ${JSON.stringify(summary.tasks)}`);
      out.push({ date, summary, wallMs });
      o.onNight?.(n, date, summary, wallMs);
    }
  } finally {
    await sandbox.close();
  }
  return out;
}
