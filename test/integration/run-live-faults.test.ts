import type { Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunOptions, type RunSummary } from '../../src/run/index.js';
import { ADMIN_STATS_PATH, startSandbox, type AdminStatsBody, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { ShortTimeouts, silentLogger, tempDir } from './helpers.js';

const KEY = 'svc_live_testlivefaults';
const SCALE = 60;
const TASKS = 12;
const yaml = `name: live-faults\njobs:\n  - kind: serp\n    mode: live\n    depth: 10\n    locations: [2840, 2826]\n    keywords: [alpha, beta, gamma, delta, epsilon, zeta]\n`;

describe('live calls against a faulty service: a charged call is never bought twice', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    tmp = await tempDir('pipeline-live-faults-');
  });
  afterEach(async () => {
    await sandbox?.close();
    await tmp.cleanup();
  });

  const opts = (dispatcher?: Dispatcher): RunOptions => ({
    pipeline: parsePipeline(yaml, 'l.yaml', {}),
    file: 'l.yaml',
    warehouseDir: tmp.dir,
    baseUrl: sandbox.url,
    apiKey: KEY,
    logger: silentLogger,
    pollIntervalMs: 20,
    collectTimeoutMs: 20_000,
    limits: { windowMs: 60_000 / SCALE },
    models: false, // the checks read the tasks, the results, the ledger and the emulator: no mart
    ...(dispatcher ? { dispatcher } : {}),
  });

  async function stats(): Promise<AdminStatsBody> {
    const res = await fetch(sandbox.url + ADMIN_STATS_PATH);
    return (await res.json()) as AdminStatsBody;
  }

  async function runUntilComplete(o: () => RunOptions): Promise<RunSummary[]> {
    const runs: RunSummary[] = [];
    while (runs.length < 8) {
      const r = await runPipeline(o());
      runs.push(r);
      if (r.state === 'completed') break;
    }
    return runs;
  }

  for (const [name, faults, timeoutMs] of [
    ['answers past the client timeout', { slow: 0.4, slowMs: 1500 }, 400],
    ['connections dropped after processing', { drop: 0.4 }, undefined],
  ] as const) {
    it(`${name}: each lost answer is found by tag and recorded failed, every other one loaded once`, async () => {
      sandbox = await startSandbox({
        admin: true,
        rateLimits: true,
        timeScale: SCALE,
        readyAfterMs: 300,
        seed: 21,
        faults,
        faultPaths: /\/live\//,
      });
      const dispatcher = timeoutMs ? new ShortTimeouts(timeoutMs) : undefined;
      try {
        const runs = await runUntilComplete(() => opts(dispatcher));
        expect(runs.at(-1)!.state).toBe('completed');
        let s = await stats();
        for (let i = 0; i < 100 && sandbox.log.length < s.calls_total; i++) {
          await new Promise((r) => setTimeout(r, 50));
          s = await stats();
        }
        const lost = Object.values(s.faults_injected).reduce((a, n) => a + (n ?? 0), 0);
        expect(lost).toBeGreaterThan(0);
        const created = Object.entries(s.tasks_created_by_tag);
        expect(created).toHaveLength(TASKS);
        expect(created.filter(([, n]) => n !== 1)).toEqual([]); // no live call bought twice
        await withWarehouse(tmp.dir, async (wh) => {
          const tasks = await wh.all<{ state: string; n: number }>(
            `SELECT state, count(*)::INT AS n FROM tasks GROUP BY state ORDER BY state`,
          );
          expect(Object.fromEntries(tasks.map((t) => [t.state, t.n]))).toEqual({ collected: TASKS - lost, failed: lost });
          const [r] = await wh.all<{ n: number; ids: number }>(
            `SELECT count(*)::INT AS n, count(DISTINCT task_id)::INT AS ids FROM serp_results`,
          );
          expect(r).toEqual({ n: TASKS - lost, ids: TASKS - lost });
          const failed = await wh.all<{ m: string }>(`SELECT status_message AS m FROM tasks WHERE state = 'failed'`);
          for (const f of failed) expect(f.m).toContain('not bought twice');
          // Each lost call is in the ledger, priced once its task was found by tag: every CNY the
          // service charged is in the ledger.
          const [l] = await wh.all<{ lost: number; estimated: number; cny: string }>(
            `SELECT count(*) FILTER (WHERE http_status IS NULL)::INT AS lost, count(*) FILTER (WHERE charge_estimated)::INT AS estimated,
                    sum(charge_cny)::VARCHAR AS cny
             FROM ledger WHERE task_id IS NULL`,
          );
          expect(l).toEqual({ lost, estimated: lost, cny: `${s.charged_cny}00` });
        });
      } finally {
        await dispatcher?.close();
      }
    }, 120_000);
  }
});
