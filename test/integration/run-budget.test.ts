import { describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/run/index.js';
import { runStatuses } from '../../src/ops/status.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { movingClock, sumDecimals } from './helpers.js';
import { budgetHarness, pipeline } from './budget-helpers.js';

describe('budget and balance stop posting cleanly and leave the run resumable', () => {
  const h = budgetHarness();
  const { opts } = h;
  const posts = () => h.sandbox.log.filter((l) => l.path.endsWith('/task_post') && l.status === 200);
  /** `pipeline status`'s figures for a run, read after the run has closed the warehouse. */
  const statusOf = async (runId: string) => {
    const wh = await Warehouse.open(h.tmp.dir);
    try {
      const [s] = await runStatuses(wh, { runId });
      return s!;
    } finally {
      wh.close();
    }
  };

  it('buys up to the budget, the batch that would pass it in part, then resumes with a higher one', async () => {
    h.sandbox = await startSandbox({ readyAfterMs: 0 });
    const notes: string[] = [];
    // 250 tasks in POSTs of 100, 100 and 50; each task costs 0.0043 CNY in the emulator. Nothing
    // prices them yet: one task is bought alone first, then the 99 others of its batch (0.43 CNY in all),
    // then the 16 tasks of the second batch that fit in the 0.07 CNY left (0.0688).
    const first = await runPipeline(opts(0.5, { onProgress: (p) => void (p.kind === 'note' && notes.push(p.text!)) }));
    expect(first.state).toBe('partial');
    expect(first.stopKind).toBe('budget');
    expect(first.stopReason).toMatch(/budget of 0\.5 CNY reached/);
    expect(notes).toContain('budget_cny: 16 of the 100 tasks of batch 2 fit within it; buying those, then stopping');
    expect(notes.filter((n) => n.startsWith('posted batch'))).toEqual([
      'posted batch 1/3 (1 of its 100 tasks)',
      'posted batch 1/3 (99 of its 100 tasks)',
      'posted batch 2/3 (16 of its 100 tasks)',
    ]);
    // The plan's 250 tasks, not only those the tasks table holds by then.
    expect(first.tasks).toMatchObject({ planned: 250, posted: 116, collected: 116 });
    expect(Number(first.chargedCny)).toBeLessThanOrEqual(0.5);
    expect(Number(first.chargedCny)).toBeGreaterThan(0.5 - 0.0043); // not a task more would have fitted
    // `pipeline status` counts the plan too: 134 of its tasks were never bought.
    expect((await statusOf(first.runId)).tasks).toMatchObject({ planned: 250, posted: 116, collected: 116, unresolved: 0 });

    const second = await runPipeline(opts(5));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ planned: 250, posted: 250, collected: 250 });
    expect(posts()).toHaveLength(5); // the first 116 were never bought again
    const wh = await Warehouse.open(h.tmp.dir);
    try {
      const sizes = await wh.all<{ n: number }>(`SELECT tasks AS n FROM ledger WHERE path LIKE '%/task_post' ORDER BY called_at, tasks`);
      expect(sizes.map((r) => r.n)).toEqual([1, 99, 16, 100, 34]); // the resume packs the 134 left anew
    } finally {
      wh.close();
    }
    expect(second.chargedCny).toBe(sumDecimals(h.sandbox.log.map((l) => l.chargeCny)));
  });

  it('settles a run an earlier night stopped at its budget, and buys the new night in a run of its own', async () => {
    h.sandbox = await startSandbox({ readyAfterMs: 0 });
    const night1 = movingClock('2026-11-20T02:00:00Z');
    const first = await runPipeline(opts(0.5, { now: night1 }));
    expect(first.stopKind).toBe('budget');
    // The same night, run again: resumed (and stopped by the same budget, buying nothing).
    const again = await runPipeline(opts(0.5, { now: movingClock('2026-11-20T03:00:00Z') }));
    expect(again.runId).toBe(first.runId);
    expect(posts()).toHaveLength(3); // the first run's one task alone, the 99 others of its batch, and 16 that fitted
    // The next night: the old run is settled, and tonight's buys up to its budget.
    const next = await runPipeline(opts(0.5, { now: movingClock('2026-11-21T02:00:00Z') }));
    expect(next.runId).not.toBe(first.runId);
    expect(next.tasks).toMatchObject({ posted: 116, collected: 116 });
    expect(posts()).toHaveLength(5); // priced by the first night: a POST of 100, then 16
  });

  it('buys one task alone when nothing prices a batch yet, so a first run passes its budget by one task at most', async () => {
    h.sandbox = await startSandbox({ readyAfterMs: 0 });
    const notes: string[] = [];
    const onProgress = (p: { kind: string; text?: string }) => void (p.kind === 'note' && notes.push(p.text!));
    // A batch of 100 tasks costs 0.43 CNY, twice this budget.
    const first = await runPipeline(opts(0.2, { onProgress }));
    expect(first.stopKind).toBe('budget');
    // The one task's charge (0.0043) prices the others: 45 of them fit in the 0.1957 CNY left.
    expect(first.tasks).toMatchObject({ planned: 250, posted: 46, collected: 46 });
    expect(Number(first.chargedCny)).toBeGreaterThan(0.2 - 0.0043);
    expect(Number(first.chargedCny)).toBeLessThanOrEqual(0.2);
    expect(first.stopReason).toMatch(/the next batch would cost about 0\.2322 CNY/); // the 54 left of it, at the one task's price
    expect(notes.some((n) => n.includes('one task is bought alone first'))).toBe(true);
    expect(posts()).toHaveLength(2);
  });

  it('prices the first batch from earlier runs: a small budget buys what it holds, one smaller than a task nothing', async () => {
    h.sandbox = await startSandbox({ readyAfterMs: 0 });
    await runPipeline(opts(5));
    const before = posts().length;
    const next = await runPipeline(opts(0.1, { newRun: true }));
    expect(next.stopKind).toBe('budget');
    expect(next.tasks).toMatchObject({ planned: 250, posted: 23 }); // 23 x 0.0043 = 0.0989
    expect(Number(next.chargedCny)).toBeLessThanOrEqual(0.1);
    expect((await statusOf(next.runId)).tasks).toMatchObject({ planned: 250, posted: 23 });
    expect(posts()).toHaveLength(before + 1);
    const none = await runPipeline(opts(0.004, { newRun: true }));
    expect(none.stopKind).toBe('budget');
    expect(none.tasks).toMatchObject({ planned: 250, posted: 0 });
    expect(posts()).toHaveLength(before + 1);
  });
});
