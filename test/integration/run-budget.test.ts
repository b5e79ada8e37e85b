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

  it('buys up to the budget, the batch that would pass it in part, then resumes with a higher one', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
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
    const wh = await Warehouse.open(tmp.dir);
    try {
      const sizes = await wh.all<{ n: number }>(`SELECT tasks AS n FROM ledger WHERE path LIKE '%/task_post' ORDER BY called_at, tasks`);
      expect(sizes.map((r) => r.n)).toEqual([1, 99, 16, 100, 34]); // the resume packs the 134 left anew
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
    expect(posts()).toHaveLength(3); // the first run's one task alone, the 99 others of its batch, and 16 that fitted
    // The next night: the old run is settled, and tonight's buys up to its budget.
    const next = await runPipeline(opts(0.5, { now: movingClock('2026-11-21T02:00:00Z') }));
    expect(next.runId).not.toBe(first.runId);
    expect(next.tasks).toMatchObject({ posted: 116, collected: 116 });
    expect(posts()).toHaveLength(5); // priced by the first night: a POST of 100, then 16
  });

  it('buys one task alone when nothing prices a batch yet, so a first run passes its budget by one task at most', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
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
    sandbox = await startSandbox({ readyAfterMs: 0 });
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

  it('live calls: a group of calls that would pass the budget goes in part, up to it', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    // A live task costs 0.0142 CNY in the emulator: 3.5 of them. The first call goes alone (nothing
    // prices it), then two of the next group of four fit.
    const live = parsePipeline(
      `name: budget\nbudget_cny: 0.0497\njobs:\n  - kind: serp\n    mode: live\n    depth: 10\n    locations: [2840]\n    keywords: [${keywords}]\n`,
      'b.yaml',
      {},
    );
    const r = await runPipeline({ ...opts(1), pipeline: live });
    expect(r.stopKind).toBe('budget');
    expect(r.tasks).toMatchObject({ posted: 3, collected: 3 });
    expect(r.chargedCny).toBe('0.042600');
    expect(sandbox.log.filter((l) => l.path.includes('/live/'))).toHaveLength(3);
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

  it('prices tasks by their depth: a depth-10 probe does not price depth-200 tasks at its charge', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    const deep = [
      'best running shoes',
      'gps running watch',
      'hoka speedgoat 6',
      'ultralight hiking boots',
      'waterproof hiking boots',
      'trail running shoes',
    ];
    const yaml = `name: depths\nbudget_cny: 0.1\njobs:\n  - kind: serp\n    name: shallow\n    depth: 10\n    locations: [2840]\n    keywords: [trekking poles]\n  - kind: serp\n    name: deep\n    depth: 200\n    locations: [2840]\n    keywords: ${JSON.stringify(deep)}\n`;
    const run = await runPipeline({ ...opts(0.1), pipeline: parsePipeline(yaml, 'depths.yaml', {}) });
    expect(run.state).toBe('partial');
    expect(run.stopKind).toBe('budget');
    // The depth-10 probe (0.0043) prices a depth-200 task at 15.25 of it (0.0656): one fits in what is left.
    expect(run.tasks).toMatchObject({ planned: 7, posted: 2 });
    const charged = sumDecimals(sandbox.log.map((l) => l.chargeCny));
    expect(Number(charged)).toBeLessThanOrEqual(0.1);
  });

  it('a resumed run prices its tasks at what they are charged, not at what is left after refunds', async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    // Long questions find few results at depth 100: most of their charge is refunded when they are collected.
    const long = [
      'how long should you wait after eating before going for a run',
      'what is the best way to clean white leather running shoes at home',
      'why do my knees hurt after running downhill on a long trail',
      'which running watch has the best battery life for ultra marathons',
    ];
    const short = [
      'best running shoes',
      'trekking poles',
      'gps running watch',
      'merino socks',
      'trail shoes',
      'rain jacket',
      'head torch',
      'gaiters',
    ];
    const yaml = `name: refunds\nbudget_cny: 0.15\njobs:\n  - kind: serp\n    depth: 100\n    locations: [2840]\n    keywords: ${JSON.stringify([...long, ...short])}\n`;
    const o = { ...opts(0.15), pipeline: parsePipeline(yaml, 'refunds.yaml', {}) };
    const first = await runPipeline(o);
    expect(first.stopKind).toBe('budget');
    const second = await runPipeline(o);
    expect(second.runId).toBe(first.runId);
    expect(second.stopKind).toBe('budget');
    expect(second.tasks.posted).toBeLessThan(12);
    // Net of the refunds, the whole run spent no more than its budget.
    const wh = await Warehouse.open(tmp.dir);
    try {
      const [r] = await wh.all<{ net: string; refunded: string }>(
        `SELECT sum(charge_cny)::VARCHAR AS net, sum(refund_cny)::VARCHAR AS refunded FROM ledger`,
      );
      expect(Number(r!.refunded)).toBeGreaterThan(0);
      expect(Number(r!.net)).toBeLessThanOrEqual(0.15);
    } finally {
      wh.close();
    }
  });
});
