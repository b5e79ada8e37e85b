// The later cases of run-budget.test.ts, split off so vitest runs the two halves in parallel (issue 45).
import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { movingClock, sumDecimals } from './helpers.js';
import { budgetHarness, keywords, pipeline } from './budget-helpers.js';

describe('budget and balance stop posting cleanly and leave the run resumable', () => {
  const h = budgetHarness();
  const { opts } = h;

  it('live calls: a group of calls that would pass the budget goes in part, up to it', async () => {
    h.sandbox = await startSandbox({ readyAfterMs: 0 });
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
    expect(h.sandbox.log.filter((l) => l.path.includes('/live/'))).toHaveLength(3);
  });

  it('says so when a run buys again what a run of the same day already bought', async () => {
    h.sandbox = await startSandbox({ readyAfterMs: 0 });
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
    h.sandbox = await startSandbox({ readyAfterMs: 0, balanceCny: '0.5000' });
    const r = await runPipeline(opts(50));
    expect(r.state).toBe('partial');
    expect(r.stopKind).toBe('balance');
    expect(r.stopReason).toContain('HTTP 402');
    expect(r.tasks).toMatchObject({ posted: 100, collected: 100 });
    expect(Number(h.sandbox.balanceCny())).toBeCloseTo(0.5 - 0.43, 4);
  });

  it('prices tasks by their depth: a depth-10 probe does not price depth-200 tasks at its charge', async () => {
    h.sandbox = await startSandbox({ readyAfterMs: 0 });
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
    const charged = sumDecimals(h.sandbox.log.map((l) => l.chargeCny));
    expect(Number(charged)).toBeLessThanOrEqual(0.1);
  });

  it('a resumed run prices its tasks at what they are charged, not at what is left after refunds', async () => {
    h.sandbox = await startSandbox({ readyAfterMs: 0 });
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
    const wh = await Warehouse.open(h.tmp.dir);
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
