import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunOptions, type RunSummary } from '../../src/run/index.js';
import { toMicros } from '../../src/post/money.js';
import { ADMIN_STATS_PATH, startSandbox, type AdminStatsBody, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { ShortTimeouts, silentLogger, sumDecimals, tempDir } from './helpers.js';

const KEY = 'svc_live_testfaults01';
const SCALE = 60; // the emulator runs 60x: a rate-limit minute is a second
/** 3 engines x 2 locations x 6 keywords: 36 tasks in three POSTs of 12 (one per engine). */
const TASKS = 36;
const yaml = (extra = '') =>
  `name: faults\n${extra}jobs:\n  - kind: serp\n    engines: [engA, engB, engC]\n    depth: 10\n    locations: [2840, 2826]\n    keywords: [alpha, beta, gamma, delta, epsilon, zeta]\n`;

describe('runs against a faulty service: every task created once, every result stored once, the ledger equal to the charges', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  /** Request ids of the emulator's answers to the test's own look-ups (not the run's, so not in its ledger). */
  const lookups = new Set<string>();

  beforeEach(async () => {
    lookups.clear();
    tmp = await tempDir('pipeline-faults-');
  });
  afterEach(async () => {
    await sandbox?.close();
    await tmp.cleanup();
  });

  const start = async (o: SandboxOptions) => {
    sandbox = await startSandbox({ admin: true, rateLimits: true, timeScale: SCALE, readyAfterMs: 300, ...o });
  };

  const opts = (extra: Partial<RunOptions> = {}, pipelineExtra = '', text = yaml(pipelineExtra)): RunOptions => ({
    pipeline: parsePipeline(text, 'faults.yaml', {}),
    file: 'faults.yaml',
    warehouseDir: tmp.dir,
    baseUrl: sandbox.url,
    apiKey: KEY,
    logger: silentLogger,
    pollIntervalMs: 20,
    collectTimeoutMs: 20_000,
    limits: { windowMs: 60_000 / SCALE },
    ...extra,
  });

  /** Runs, and runs again while the run stops part way (as a nightly job would the next night). */
  async function runUntilComplete(o: () => RunOptions, most = 12): Promise<RunSummary[]> {
    const runs: RunSummary[] = [];
    while (runs.length < most) {
      const r = await runPipeline(o());
      runs.push(r);
      if (r.state === 'completed') break;
    }
    return runs;
  }

  async function stats(): Promise<AdminStatsBody> {
    const res = await request(sandbox.url + ADMIN_STATS_PATH);
    return (await res.body.json()) as AdminStatsBody;
  }

  /**
   * The emulator's own record against the warehouse: each tag created exactly once and
   * known to state, each created task collected with exactly one result row, and the ledger
   * holding every answer the client received with the charge the emulator sent. Answers
   * that never reached the client (dropped, or past its timeout) are the only charges the
   * ledger may lack, and there are exactly `lost` of them.
   */
  async function expectExactlyOnce(lost: number, expected = TASKS): Promise<AdminStatsBody> {
    let s = await stats();
    // Slow answers are logged when they are finally sent: wait for the emulator to finish them.
    for (let i = 0; i < 100 && sandbox.log.length < s.calls_total; i++) {
      await new Promise((r) => setTimeout(r, 50));
      s = await stats();
    }
    const created = Object.entries(s.tasks_created_by_tag);
    expect(created).toHaveLength(expected);
    expect(created.filter(([, n]) => n !== 1)).toEqual([]); // no task bought twice
    await withWarehouse(tmp.dir, async (wh) => {
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
      const log = sandbox.log.filter((l) => !lookups.has(l.requestId));
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
      expect(sumDecimals(sandbox.log.map((l) => l.chargeCny))).toBe(sumDecimals([s.charged_cny]));
    });
    return s;
  }

  it('429 bursts: refusals are waited out and repeated, nothing bought twice', async () => {
    await start({ seed: 11, faults: { burst429: 0.05, burstLength: 3 } });
    const runs = await runUntilComplete(() => opts());
    const s = await expectExactlyOnce(0);
    expect(s.faults_injected.burst429).toBeGreaterThan(5);
    expect(runs.at(-1)!.state).toBe('completed');
  }, 120_000);

  it('5xx before processing: free reads repeated, a refused POST looked up by tag at once and posted again once', async () => {
    await start({ seed: 4, faults: { error5xx: 0.15 } });
    const runs = await runUntilComplete(() => opts());
    const s = await expectExactlyOnce(0);
    expect(Object.keys(s.faults_injected).some((k) => k.startsWith('http5'))).toBe(true);
    // A task_post answered 5xx is looked up by tag in the same run (issue 16, point 6) before it
    // is posted again: the first run completes, with a look-up after each failed POST.
    expect(sandbox.log.some((l) => l.path.endsWith('/task_post') && l.status >= 500)).toBe(true);
    const failedPosts = sandbox.log.filter((l) => l.path.endsWith('/task_post') && l.status >= 500).length;
    expect(sandbox.log.filter((l) => l.path.endsWith('/id_list') && l.status === 200).length).toBeGreaterThanOrEqual(failedPosts);
    expect(runs).toHaveLength(1);
    expect(runs.at(-1)!.state).toBe('completed');
  }, 120_000);

  it('task_post timeouts: a POST created and charged but unanswered is found by tag, never bought again', async () => {
    await start({ seed: 5, faults: { slow: 0.5, slowMs: 1500 }, faultPaths: /\/task_post$/ });
    const dispatcher = new ShortTimeouts(400);
    try {
      const runs = await runUntilComplete(() => opts({ dispatcher }));
      const s = await expectExactlyOnce((await stats()).faults_injected.slow ?? 0);
      expect(s.faults_injected.slow).toBeGreaterThan(0);
      expect(runs.some((r) => r.stopKind === 'unknown')).toBe(true);
      expect(runs.at(-1)!.state).toBe('completed');
    } finally {
      await dispatcher.close();
    }
  }, 120_000);

  it('dropped connections after processing: each lost charge is in the ledger, priced from id_list once its tasks are found', async () => {
    await start({ seed: 8, faults: { drop: 0.4 }, faultPaths: /\/task_post$/ });
    const runs = await runUntilComplete(() => opts());
    const s = await expectExactlyOnce((await stats()).faults_injected.drop ?? 0);
    expect(s.faults_injected.drop).toBeGreaterThan(0);
    expect(runs.at(-1)!.state).toBe('completed');
  }, 120_000);

  it('malformed bodies: kept raw, a charged POST looked up by tag, a free read asked again', async () => {
    await start({ seed: 4, faults: { malformed: 0.2 } });
    const runs = await runUntilComplete(() => opts());
    const s = await expectExactlyOnce(0);
    expect(s.faults_injected.malformed).toBeGreaterThan(2);
    // A truncated free read is asked again at once; only a charged POST's stops a run (its outcome unknown).
    expect(runs.filter((r) => r.state !== 'completed').map((r) => r.stopKind)).toEqual(runs.slice(1).map(() => 'unknown'));
    await withWarehouse(tmp.dir, async (wh) => {
      const [m] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM raw_responses WHERE kind = '_malformed'`);
      expect(m!.n).toBe(s.faults_injected.malformed); // every truncated body landed as received
      const [p] = await wh.all<{ n: number }>(
        `SELECT count(*)::INT AS n FROM raw_responses WHERE kind = '_malformed' AND path LIKE '%/task_post'`,
      );
      expect(p!.n).toBeGreaterThan(0); // some were answers to a charged POST
    });
    expect(runs.at(-1)!.state).toBe('completed');
  }, 120_000);
});
