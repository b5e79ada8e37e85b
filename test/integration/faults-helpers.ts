// The set-up shared by run-faults.test.ts and run-faults-later.test.ts (one suite split in two so
// vitest runs the halves in parallel): a faulty emulator at time scale 60, a fresh warehouse per
// test, and the exactly-once check of the emulator's record against the warehouse.
import { request } from 'undici';
import { afterEach, beforeEach, expect } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunOptions, type RunSummary } from '../../src/run/index.js';
import { toMicros } from '../../src/post/money.js';
import { ADMIN_STATS_PATH, startSandbox, type AdminStatsBody, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, sumDecimals, tempDir } from './helpers.js';

export const KEY = 'svc_live_testfaults01';
export const SCALE = 60; // the emulator runs 60x: a rate-limit minute is a second
/** 3 engines x 2 locations x 6 keywords: 36 tasks in three POSTs of 12 (one per engine). */
export const TASKS = 36;
export const yaml = (extra = '') =>
  `name: faults\n${extra}jobs:\n  - kind: serp\n    engines: [engA, engB, engC]\n    depth: 10\n    locations: [2840, 2826]\n    keywords: [alpha, beta, gamma, delta, epsilon, zeta]\n`;

/**
 * Registers the per-test set-up (a fresh warehouse folder; the emulator closed after each test)
 * in the calling describe block, and returns the test's handles: `sandbox` once `start` made it,
 * `tmp` the warehouse folder.
 */
export function faultsHarness() {
  const h = {
    sandbox: undefined as unknown as SandboxHandle,
    tmp: undefined as unknown as { dir: string; cleanup: () => Promise<void> },
    /** Request ids of the emulator's answers to the test's own look-ups (not the run's, so not in its ledger). */
    lookups: new Set<string>(),
    /** A free GET of the test's own, kept out of the ledger comparison. */
    async lookUp<T>(path: string): Promise<T> {
      const res = await request(h.sandbox.url + path, { headers: { authorization: `Bearer ${KEY}` } });
      h.lookups.add(String(res.headers['x-svc-request-id']));
      return (await res.body.json()) as T;
    },
    async start(o: SandboxOptions): Promise<void> {
      h.sandbox = await startSandbox({ admin: true, rateLimits: true, timeScale: SCALE, readyAfterMs: 300, ...o });
    },
    opts(extra: Partial<RunOptions> = {}, pipelineExtra = '', text = yaml(pipelineExtra)): RunOptions {
      return {
        pipeline: parsePipeline(text, 'faults.yaml', {}),
        file: 'faults.yaml',
        warehouseDir: h.tmp.dir,
        baseUrl: h.sandbox.url,
        apiKey: KEY,
        logger: silentLogger,
        pollIntervalMs: 20,
        collectTimeoutMs: 20_000,
        limits: { windowMs: 60_000 / SCALE },
        // The fault tests read the tasks, the results, the ledger and the emulator: no mart.
        models: false,
        ...extra,
      };
    },
    /** Runs, and runs again while the run stops part way (as a nightly job would the next night). */
    async runUntilComplete(o: () => RunOptions, most = 12): Promise<RunSummary[]> {
      const runs: RunSummary[] = [];
      while (runs.length < most) {
        const r = await runPipeline(o());
        runs.push(r);
        if (r.state === 'completed') break;
      }
      return runs;
    },
    async stats(): Promise<AdminStatsBody> {
      const res = await request(h.sandbox.url + ADMIN_STATS_PATH);
      return (await res.body.json()) as AdminStatsBody;
    },
    expectExactlyOnce,
  };

  /**
   * The emulator's own record against the warehouse: each tag created exactly once and
   * known to state, each created task collected with exactly one result row, and the ledger
   * holding every answer the client received with the charge the emulator sent. Answers
   * that never reached the client (dropped, or past its timeout) are the only charges the
   * ledger may lack, and there are exactly `lost` of them.
   */
  async function expectExactlyOnce(lost: number, expected = TASKS): Promise<AdminStatsBody> {
    let s = await h.stats();
    // Slow answers are logged when they are finally sent: wait for the emulator to finish them.
    for (let i = 0; i < 100 && h.sandbox.log.length < s.calls_total; i++) {
      await new Promise((r) => setTimeout(r, 50));
      s = await h.stats();
    }
    const created = Object.entries(s.tasks_created_by_tag);
    expect(created).toHaveLength(expected);
    expect(created.filter(([, n]) => n !== 1)).toEqual([]); // no task bought twice
    await withWarehouse(h.tmp.dir, async (wh) => {
      const tasks = await wh.all<{ tag: string; task_id: string; state: string }>(`SELECT tag, task_id, state FROM tasks ORDER BY tag`);
      expect(tasks.map((t) => t.tag)).toEqual(created.map(([tag]) => tag).sort()); // every task bought is known
      expect(tasks.filter((t) => t.state !== 'collected')).toEqual([]);
      const [r] = await wh.all<{ n: number; ids: number; known: number }>(
        `SELECT count(*)::INT AS n, count(DISTINCT task_id)::INT AS ids,
                count(*) FILTER (WHERE task_id IN (SELECT task_id FROM tasks))::INT AS known FROM serp_results`,
      );
      expect(r).toEqual({ n: expected, ids: expected, known: expected }); // every result, each once
      const [items] = await wh.all<{ n: number; keys: number }>(
        `SELECT count(*)::INT AS n, count(DISTINCT (task_id, result_index, item_index))::INT AS keys FROM serp_items`,
      );
      expect(items!.n).toBe(items!.keys);
      expect(items!.n).toBeGreaterThanOrEqual(expected * 10);

      const ledger = await wh.all<{ request_id: string | null; charge: string | null; lost: boolean; estimated: boolean }>(
        `SELECT request_id, charge_cny::VARCHAR AS charge, http_status IS NULL AS lost, charge_estimated AS estimated FROM ledger WHERE task_id IS NULL`,
      );
      const answered = ledger.filter((l) => !l.lost);
      const byRequest = new Map(answered.map((l) => [l.request_id, l.charge ?? '0']));
      expect(byRequest.size).toBe(answered.length); // one ledger row per answer
      const log = h.sandbox.log.filter((l) => !h.lookups.has(l.requestId));
      const received = log.filter((l) => byRequest.has(l.requestId));
      const missing = log.filter((l) => !byRequest.has(l.requestId));
      expect(received).toHaveLength(answered.length); // no ledger row the emulator did not send
      for (const l of received) expect(toMicros(byRequest.get(l.requestId)!)).toBe(toMicros(l.chargeCny));
      expect(missing).toHaveLength(lost);
      expect(sumDecimals(answered.map((l) => l.charge ?? '0'))).toBe(sumDecimals(received.map((l) => l.chargeCny)));
      // Each call whose answer never arrived has its row too, priced once its tasks were found by
      // tag (charge_estimated): the ledger holds every CNY the service charged.
      const unanswered = ledger.filter((l) => l.lost);
      expect(unanswered).toHaveLength(lost);
      expect(unanswered.filter((l) => !l.estimated)).toEqual([]);
      expect(sumDecimals(ledger.map((l) => l.charge ?? '0'))).toBe(sumDecimals([s.charged_cny]));
      expect(sumDecimals(h.sandbox.log.map((l) => l.chargeCny))).toBe(sumDecimals([s.charged_cny]));
    });
    return s;
  }

  beforeEach(async () => {
    h.lookups.clear();
    h.tmp = await tempDir('pipeline-faults-');
  });
  afterEach(async () => {
    await h.sandbox?.close();
    await h.tmp.cleanup();
  });
  return h;
}
