import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/client/index.js';
import { makeProgress } from '../../../src/cli/progress.js';
import { collectProgress, formatDuration, progressLine, timeLeftAtRateMs, type RunProgress } from '../../../src/run/progress.js';
import type { ProgressEvent } from '../../../src/run/index.js';

/** The spec's limits in a window already full: every call left waits for it to slide. */
const limits = { windowMs: 60_000, currentLimit: (f: string) => (f === 'tasks_fixed' ? 20 : 60), free: () => 0 };

describe('time left at the rate limit', () => {
  it('is the calls left over the family limit, in windows', () => {
    // 10 POSTs and 1,190 task_gets of the SERP family: 1,200 calls at 60 a minute.
    expect(
      timeLeftAtRateMs(
        [
          { family: 'serp_keywords_domain', calls: 10 },
          { family: 'serp_keywords_domain', calls: 1190 },
        ],
        limits,
      ),
    ).toBe(20 * 60_000);
    expect(timeLeftAtRateMs([{ family: 'serp_keywords_domain', calls: 30 }], limits)).toBe(30_000);
  });

  it('lets families run side by side: the slowest one sets the pace', () => {
    const ms = timeLeftAtRateMs(
      [
        { family: 'serp_keywords_domain', calls: 60 },
        { family: 'tasks_fixed', calls: 40 },
      ],
      limits,
    );
    expect(ms).toBe(2 * 60_000); // 40 at 20 a minute, while the 60 SERP calls take one
  });

  it("counts the room left in the family's window as going at once", () => {
    // A fresh limiter: 60 SERP calls can start now, the other 60 wait a window.
    expect(timeLeftAtRateMs([{ family: 'serp_keywords_domain', calls: 120 }], new RateLimiter())).toBe(60_000);
    expect(timeLeftAtRateMs([{ family: 'serp_keywords_domain', calls: 41 }], new RateLimiter())).toBe(0);
    expect(timeLeftAtRateMs([{ family: 'serp_keywords_domain', calls: 120 }], { ...limits, free: () => 20 })).toBe(100_000);
  });

  it('follows the limiter: a shorter window (time-scaled emulator), raised limits, a limit lowered after a 429', async () => {
    const scaled = new RateLimiter({ windowMs: 1000 });
    expect(timeLeftAtRateMs([{ family: 'serp_keywords_domain', calls: 180 }], scaled)).toBe(2000);
    expect(
      timeLeftAtRateMs([{ family: 'serp_keywords_domain', calls: 4000 }], new RateLimiter({ perMinute: { serp_keywords_domain: 2000 } })),
    ).toBe(60_000);
    // After a 429 the limiter's own limit drops, and so does the pace of the estimate.
    let t = 0;
    const hit = new RateLimiter({ now: () => t });
    for (let i = 0; i < 10; i++) await hit.schedule('serp_keywords_domain', async () => {});
    hit.penalize('serp_keywords_domain', 1000);
    expect(hit.currentLimit('serp_keywords_domain')).toBe(30);
    // 20 of the 30 slots are free (the ten calls hold theirs for a window); 70 calls wait, 30 a window.
    expect(timeLeftAtRateMs([{ family: 'serp_keywords_domain', calls: 90 }], hit)).toBe(140_000);
  });

  it('is null when nothing is left to call, whatever the families', () => {
    expect(timeLeftAtRateMs([], limits)).toBeNull();
    expect(timeLeftAtRateMs([{ family: 'serp_keywords_domain', calls: 0 }], limits)).toBeNull();
  });

  it('is formatted short', () => {
    expect([0, 999, 42_000, 185_000, 3_600_000, 7_620_000].map(formatDuration)).toEqual(['0s', '1s', '42s', '3m 05s', '1h 00m', '2h 07m']);
  });

  it('is carried into the collect line with the run counts', () => {
    const p = collectProgress(
      {
        posted: 120,
        ready: 20,
        collected: 90,
        failed: 1,
        pending: 29,
        refetched: 0,
        callsLeft: [{ family: 'serp_keywords_domain', calls: 29 }],
      },
      limits,
      '0.516',
    );
    expect(p).toMatchObject({ posted: 120, ready: 20, collected: 90, failed: 1, pending: 29, postsLeft: 0, timeLeftMs: 29_000 });
    expect(progressLine(p)).toBe('posted 120 · ready 20 · collected 90/120 (1 failed) · 0.5160 CNY so far · ~29s left at the rate limit');
    expect(progressLine({ ...p, timeLeftMs: 400 })).toContain('under 1s left at the rate limit');
  });
});

const line = (over: Partial<RunProgress>): ProgressEvent => ({
  kind: 'collect',
  posted: 100,
  ready: 0,
  collected: 0,
  failed: 0,
  pending: 100,
  postsLeft: 0,
  refetched: 0,
  chargedCny: '0.43',
  timeLeftMs: 100_000,
  ...over,
});

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { isTTY, chunks, write: (s: string) => (chunks.push(s), true) } as unknown as NodeJS.WritableStream & {
    isTTY: boolean;
    chunks: string[];
  };
}

describe('progress rendering', () => {
  it('rewrites one line in place on a terminal, and ends it when all is collected', () => {
    const out = sink(true);
    const show = makeProgress(out);
    show(line({ postsLeft: 1, pending: 100 }));
    show(line({ collected: 50, pending: 50, timeLeftMs: 50_000 }));
    show(line({ collected: 100, pending: 0, timeLeftMs: null }));
    expect(out.chunks.every((c) => c.startsWith('\r\x1b[K') || c === '\n')).toBe(true);
    expect(out.chunks.filter((c) => c === '\n')).toHaveLength(1);
    expect(out.chunks[0]).toContain('posting (1 POST left) · posted 100');
    expect(out.chunks.at(-2)).toContain('collected 100/100 · 0.4300 CNY so far · nothing left to call');
  });

  it('prints plain lines in a log at most every interval, and always the last one', () => {
    const out = sink(false);
    let t = 0;
    const show = makeProgress(out, { logIntervalMs: 10_000, now: () => t });
    for (let done = 0; done < 100; done += 5) {
      show(line({ collected: done, pending: 100 - done, timeLeftMs: (100 - done) * 1000 }));
      t += 1000; // one event a second
    }
    show(line({ collected: 100, pending: 0, timeLeftMs: null }));
    expect(out.chunks.every((c) => !c.includes('\r') && c.endsWith('\n'))).toBe(true);
    expect(out.chunks).toHaveLength(3); // t=0, t=10 s, and the end
    expect(out.chunks[1]).toContain('collected 50/100 · 0.4300 CNY so far · ~50s left at the rate limit');
    expect(out.chunks[2]).toContain('collected 100/100');
  });

  it('ends an open terminal line before a note', () => {
    const out = sink(true);
    const show = makeProgress(out);
    show(line({}));
    show({ kind: 'note', text: 'posted batch 2/2 (20 tasks)' });
    expect(out.chunks.slice(-2)).toEqual(['\n', 'posted batch 2/2 (20 tasks)\n']);
  });
});
