import { describe, expect, it } from 'vitest';
import { withWarehouse } from '../../src/warehouse/index.js';
import { ShortTimeouts } from './helpers.js';
import { faultsHarness } from './faults-helpers.js';

describe('runs against a faulty service: every task created once, every result stored once, the ledger equal to the charges', () => {
  const h = faultsHarness();
  const { start, opts, runUntilComplete, stats, expectExactlyOnce } = h;

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
    expect(h.sandbox.log.some((l) => l.path.endsWith('/task_post') && l.status >= 500)).toBe(true);
    const failedPosts = h.sandbox.log.filter((l) => l.path.endsWith('/task_post') && l.status >= 500).length;
    expect(h.sandbox.log.filter((l) => l.path.endsWith('/id_list') && l.status === 200).length).toBeGreaterThanOrEqual(failedPosts);
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
    await withWarehouse(h.tmp.dir, async (wh) => {
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
