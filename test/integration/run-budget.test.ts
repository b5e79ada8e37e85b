import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunOptions } from '../../src/run/index.js';
import { runStatuses } from '../../src/run/status.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger, sumDecimals, tempDir } from './helpers.js';

const KEY = 'svc_live_budgettest';
const keywords = Array.from({ length: 125 }, (_, i) => `kw ${i}`).join(', ');
const pipeline = (budget: number) =>
  parsePipeline(
    `name: budget\nbudget_cny: ${budget}\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840, 2826]\n    keywords: [${keywords}]\n`,
    'b.yaml',
    {},
  );

describe('budget and balance stop posting cleanly and leave the run resumable', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  const opts = (budget: number, extra: Partial<RunOptions> = {}): RunOptions => ({
    pipeline: pipeline(budget),
    file: 'b.yaml',
    warehouseDir: tmp.dir,
    baseUrl: sandbox.url,
    apiKey: KEY,
    logger: silentLogger,
    pollIntervalMs: 5,
    limits: { windowMs: 200 }, // a rate-limit "minute" of 0.2 s: 60 calls per 0.2 s
    ...extra,
  });
  const posts = () => sandbox.log.filter((l) => l.path.endsWith('/task_post') && l.status === 200);
  /** `pipeline status`'s figures for a run, read after the run has closed the warehouse. */
  const statusOf = async (runId: string) => {
    const wh = await Warehouse.open(tmp.dir);
    try {
      const [s] = await runStatuses(wh, { runId });
      return s!;
    } finally {
      wh.close();
    }
  };

  beforeEach(async () => {
    tmp = await tempDir('pipeline-budget-');
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('stops before the batch that would pass the budget, then resumes with a higher one', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    // 250 tasks in POSTs of 100, 100 and 50; each task costs 0.0043 CNY in the emulator. Nothing
    // prices them yet: one task is bought alone first, then the 99 others of its batch (0.43 CNY in all).
    const first = await runPipeline(opts(0.5));
    expect(first.state).toBe('partial');
    expect(first.stopKind).toBe('budget');
    expect(first.stopReason).toMatch(/budget of 0\.5 CNY reached/);
    // The plan's 250 tasks, not only those the tasks table holds by then.
    expect(first.tasks).toMatchObject({ planned: 250, posted: 100, collected: 100 });
    expect(Number(first.chargedCny)).toBeLessThanOrEqual(0.5);
    // `pipeline status` counts the plan too: 150 of its tasks were never recorded.
    expect((await statusOf(first.runId)).tasks).toMatchObject({ planned: 250, posted: 100, collected: 100, unresolved: 0 });

    const second = await runPipeline(opts(5));
    expect(second.runId).toBe(first.runId);
    expect(second.state).toBe('completed');
    expect(second.tasks).toMatchObject({ planned: 250, posted: 250, collected: 250 });
    expect(posts()).toHaveLength(4); // the first 100 were never bought again
    const wh = await Warehouse.open(tmp.dir);
    try {
      const sizes = await wh.all<{ n: number }>(`SELECT tasks AS n FROM ledger WHERE path LIKE '%/task_post' ORDER BY called_at, tasks`);
      expect(sizes.map((r) => r.n)).toEqual([1, 99, 100, 50]);
    } finally {
      wh.close();
    }
    expect(second.chargedCny).toBe(sumDecimals(sandbox.log.map((l) => l.chargeCny)));
  });

  it('settles a run an earlier night stopped at its budget, and buys the new night in a run of its own', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    const night1 = movingClock('2026-11-20T02:00:00Z');
    const first = await runPipeline(opts(0.5, { now: night1 }));
    expect(first.stopKind).toBe('budget');
    // The same night, run again: resumed (and stopped by the same budget, buying nothing).
    const again = await runPipeline(opts(0.5, { now: movingClock('2026-11-20T03:00:00Z') }));
    expect(again.runId).toBe(first.runId);
    expect(posts()).toHaveLength(2); // the first run's one task alone, then the 99 others of its batch
    // The next night: the old run is settled, and tonight's posts its first batch under its budget.
    const next = await runPipeline(opts(0.5, { now: movingClock('2026-11-21T02:00:00Z') }));
    expect(next.runId).not.toBe(first.runId);
    expect(next.tasks).toMatchObject({ posted: 100, collected: 100 });
    expect(posts()).toHaveLength(3); // priced by the first night: one POST of 100
  });

  it('buys one task alone when nothing prices a batch yet, so a first run passes its budget by one task at most', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    const notes: string[] = [];
    const onProgress = (p: { kind: string; text?: string }) => void (p.kind === 'note' && notes.push(p.text!));
    // A batch of 100 tasks costs 0.43 CNY, twice this budget.
    const first = await runPipeline(opts(0.2, { onProgress }));
    expect(first.stopKind).toBe('budget');
    expect(first.tasks).toMatchObject({ planned: 250, posted: 1, collected: 1 });
    expect(Number(first.chargedCny)).toBeGreaterThan(0);
    expect(Number(first.chargedCny)).toBeLessThanOrEqual(0.2);
    expect(first.stopReason).toMatch(/the next batch would cost about 0\.4257 CNY/); // the 99 others, at the one task's price
    expect(notes.some((n) => n.includes('one task is bought alone first'))).toBe(true);
    expect(posts()).toHaveLength(1);
  });

  it('prices the first batch from earlier runs, so a small budget posts nothing', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    await runPipeline(opts(5));
    const before = posts().length;
    const next = await runPipeline(opts(0.1, { newRun: true }));
    expect(next.stopKind).toBe('budget');
    expect(next.tasks).toMatchObject({ planned: 250, posted: 0 });
    expect((await statusOf(next.runId)).tasks).toMatchObject({ planned: 250, posted: 0 });
    expect(posts()).toHaveLength(before);
  });

  it('says so when a run buys again what a run of the same day already bought', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    const notesOf = async (at: string) => {
      const notes: string[] = [];
      const r = await runPipeline(opts(5, { now: movingClock(at), onProgress: (p) => void (p.kind === 'note' && notes.push(p.text!)) }));
      expect(r.state).toBe('completed');
      return { r, repeat: notes.filter((n) => n.includes('already completed today')) };
    };
    const first = await notesOf('2026-11-20T02:00:00Z');
    expect(first.repeat).toEqual([]);
    const again = await notesOf('2026-11-20T09:00:00Z');
    expect(again.repeat).toEqual([
      `a run of budget already completed today (${first.r.runId}, started 2026-11-20 02:00 UTC): this run buys its 250 tasks again`,
    ]);
    expect((await notesOf('2026-11-21T02:00:00Z')).repeat).toEqual([]); // the next night is a night like any
  });

  it('stops at a 402 with the refused batch left to post, not lost and not bought', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0, balanceCny: '0.5000' });
    const r = await runPipeline(opts(50));
    expect(r.state).toBe('partial');
    expect(r.stopKind).toBe('balance');
    expect(r.stopReason).toContain('HTTP 402');
    expect(r.tasks).toMatchObject({ posted: 100, collected: 100 });
    expect(Number(sandbox.balanceCny())).toBeCloseTo(0.5 - 0.43, 4);
  });
});
