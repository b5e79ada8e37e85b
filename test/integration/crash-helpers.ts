import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_STATS_PATH, startSandbox, type AdminStatsBody, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { toMicros } from '../../src/post/money.js';
import { tempDir } from './helpers.js';

const KEY = 'svc_live_testcrash01';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The compiled CLI (dist/, built once for the whole suite by test/global-setup.ts; bin/pipeline.mjs
 * falls back to the sources only when that build is not current): every child then starts in a
 * fraction of the CPU time tsx takes to load the sources, which is what lets 20+ kills fit in a
 * reasonable test time.
 */
const CLI = join(ROOT, 'bin', 'pipeline.mjs');
const TASKS = 120; // 60 keywords x 2 locations: two POSTs of 100 and 20

/** A seeded generator, so a failing sequence of kill times can be replayed. */
function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Registers the kill test: a night of TASKS tasks in child processes killed with SIGKILL at
 * random moments (seeded by `seed`) until `kills` kills landed mid-run, then left to complete.
 * crash.test.ts and crash-more.test.ts each take 10 kills of their own seed: one file of 20
 * kills took 39 s, 55 s with four test files at once, against the suite's 60 s a file.
 */
export function killTest(seed: number, kills: number): void {
  describe(`killed with SIGKILL at random moments (seed ${seed}), a run never pays twice and never loses a result`, () => {
    let sandbox: SandboxHandle;
    let tmp: { dir: string; cleanup: () => Promise<void> };
    let file: string;

    beforeAll(async () => {
      sandbox = await startSandbox({ admin: true, readyAfterMs: 300, timeScale: 60, rateLimits: true });
      tmp = await tempDir('pipeline-crash-');
      file = join(tmp.dir, 'crash.yaml');
      const keywords = Array.from({ length: TASKS / 2 }, (_, i) => `crash keyword ${i}`).join(', ');
      await writeFile(
        file,
        `name: crash\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840, 2826]\n    keywords: [${keywords}]\n`,
      );
    }, 120_000);
    afterAll(async () => {
      await sandbox.close();
      await tmp.cleanup();
    });

    /**
     * One `pipeline run` in a child process. With `killAfterMs`, it is killed with SIGKILL that
     * long after it prints its first line (the run has planned or is resuming: startup is
     * over), so every kill lands in the run's own work. Resolves with the exit code, or null
     * when the kill came first.
     */
    function run(killAfterMs?: number): Promise<number | null> {
      return new Promise((resolve) => {
        const child = spawn(
          process.execPath,
          [CLI, 'run', file, '--warehouse', join(tmp.dir, 'wh'), '--no-models', '--time-scale', '60', '--poll-interval', '0.1'],
          {
            env: { ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: sandbox.url },
            stdio: ['ignore', 'ignore', 'pipe'],
          },
        );
        let timer: NodeJS.Timeout | undefined;
        child.stderr.on('data', () => {
          if (killAfterMs !== undefined && timer === undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        });
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
    }

    it(`creates each task exactly once and stores each result exactly once over ${kills} kills`, async () => {
      const rand = mulberry32(seed);
      let killed = 0;
      // Kill, run again, until `kills` kills landed mid-run; a run that completes before its
      // kill is followed by a new run (the next night), which is killed in turn.
      for (let i = 0; killed < kills && i < kills * 2; i++) {
        const code = await run(Math.floor(rand() * 1200));
        if (code === null) killed++;
        else if (code !== 0) throw new Error(`run ${i} exited with ${code}`);
      }
      expect(killed).toBe(kills);
      expect(await run()).toBe(0); // one last run, left alone, completes

      const res = await request(sandbox.url + ADMIN_STATS_PATH);
      const stats = (await res.body.json()) as AdminStatsBody;
      const created = Object.entries(stats.tasks_created_by_tag);
      expect(created.every(([, n]) => n === 1)).toBe(true); // no task bought twice

      await withWarehouse(join(tmp.dir, 'wh'), async (wh) => {
        // A kill that lands after a run has completed leaves nothing to resume, so the next
        // invocation is a new run (a new night) with new tags: every run must be whole.
        const runs = await wh.all<{ run_id: string; state: string }>(`SELECT run_id, state FROM runs ORDER BY started_at`);
        expect(runs.length).toBeGreaterThanOrEqual(1);
        // Most kills landed mid-run and were resumed, not started afresh.
        expect(runs.length).toBeLessThan(killed / 2 + 1);
        expect(runs.every((r) => r.state === 'completed')).toBe(true);
        const [t] = await wh.all<{ tasks: number; collected: number }>(
          `SELECT count(*)::INT AS tasks, count(*) FILTER (WHERE state = 'collected')::INT AS collected FROM tasks`,
        );
        expect(t).toEqual({ tasks: TASKS * runs.length, collected: TASKS * runs.length });
        const tags = await wh.all<{ tag: string }>(`SELECT tag FROM tasks ORDER BY tag`);
        expect(tags.map((x) => x.tag)).toEqual(created.map(([tag]) => tag).sort()); // the warehouse knows every task bought
        const [r] = await wh.all<{ n: number; ids: number; tags: number }>(
          `SELECT count(*)::INT AS n, count(DISTINCT task_id)::INT AS ids, count(DISTINCT tag)::INT AS tags FROM serp_results`,
        );
        expect(r).toEqual({ n: TASKS * runs.length, ids: TASKS * runs.length, tags: TASKS * runs.length }); // every result, each once
        // Every answer the ledger holds is one the emulator sent, with the charge it sent. A call
        // killed before its answer was landed keeps the row written before it was sent (no request
        // id; a charged POST), priced from id_list once the rerun found its tasks.
        const ledger = await wh.all<{ request_id: string | null; charge: string | null; method: string; http: number | null }>(
          `SELECT request_id, charge_cny::VARCHAR AS charge, method, http_status AS http FROM ledger WHERE task_id IS NULL`,
        );
        const sent = new Map(sandbox.log.map((l) => [l.requestId, l.chargeCny]));
        const answered = ledger.filter((l) => l.request_id !== null);
        expect(answered.filter((l) => !sent.has(l.request_id!) || toMicros(sent.get(l.request_id!)!) !== toMicros(l.charge!))).toEqual([]);
        expect(ledger.filter((l) => l.request_id === null && (l.method !== 'POST' || l.http !== null))).toEqual([]);
        // So every CNY the emulator charged is in the ledger, when every such call could be priced
        // (one killed before any POST was answered has no ratio to price it at: its charge stays unknown).
        const total = (xs: (string | null)[]) => xs.reduce((s, x) => s + toMicros(x ?? '0'), 0n);
        if (ledger.every((l) => l.charge !== null))
          expect(total(ledger.map((l) => l.charge))).toBe(total(sandbox.log.map((l) => l.chargeCny)));
      });
    }, 600_000);
  });
}
