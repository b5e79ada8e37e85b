import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SlidingWindow } from '../../../src/client/index.js';

/** Starts `n` acquisitions and reports how many got a slot so far. */
function contend(w: SlidingWindow, n: number) {
  const releases: Array<(refused?: boolean) => void> = [];
  for (let i = 0; i < n; i++) void w.acquire().then((r) => releases.push(r));
  return releases;
}

const flush = () => vi.advanceTimersByTimeAsync(0);

describe('SlidingWindow', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets no more than the limit start within a window of the last answer, so no edge double burst', async () => {
    const w = new SlidingWindow({ limit: 3, windowMs: 1000, concurrency: 10, now: () => Date.now() });
    const got = contend(w, 6);
    await flush();
    expect(got).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(900); // the three answers arrive at t = 900
    got.splice(0).forEach((r) => r());
    await vi.advanceTimersByTimeAsync(999); // t = 1899: a fixed window would have reset at 1000
    expect(got).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(5);
    expect(got).toHaveLength(3);
  });

  it('holds a slot for as long as its call is in flight', async () => {
    const w = new SlidingWindow({ limit: 1, windowMs: 100, concurrency: 10, now: () => Date.now() });
    const got = contend(w, 2);
    await vi.advanceTimersByTimeAsync(5000);
    expect(got).toHaveLength(1);
    got[0]!();
    await vi.advanceTimersByTimeAsync(99);
    expect(got).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(5);
    expect(got).toHaveLength(2);
  });

  it('caps calls in flight at the concurrency', async () => {
    const w = new SlidingWindow({ limit: 100, windowMs: 100, concurrency: 2, now: () => Date.now() });
    const got = contend(w, 5);
    await flush();
    expect(got).toHaveLength(2);
    got[0]!();
    await flush();
    expect(got).toHaveLength(3);
  });

  it('on a 429 gives the slot back, pauses for Retry-After and narrows, then recovers a tenth per clean window', async () => {
    const w = new SlidingWindow({ limit: 10, windowMs: 1000, concurrency: 10, now: () => Date.now() });
    const got = contend(w, 4);
    await flush();
    got[0]!(); // served
    got[1]!(); // served
    got[2]!(true); // refused
    w.penalize(300);
    expect(w.limit).toBe(5); // served or in flight: 3, but never below half of 10
    const more = contend(w, 1);
    await vi.advanceTimersByTimeAsync(299);
    expect(more).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(5);
    expect(more).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    void w.acquire();
    expect(w.limit).toBe(6);
    await vi.advanceTimersByTimeAsync(10_000);
    void w.acquire();
    expect(w.limit).toBe(10);
  });

  it('on abort fails every call still waiting, unsent, keeps the calls in flight, and leaves no listener behind', async () => {
    const stop = new AbortController();
    const w = new SlidingWindow({ limit: 2, windowMs: 60_000, concurrency: 10, now: () => Date.now(), signal: stop.signal });
    const got = contend(w, 2);
    const waiting = [w.acquire(), w.acquire()].map((p) =>
      p.then(
        () => 'sent',
        (e: { code?: string }) => e.code,
      ),
    );
    await flush();
    expect(got).toHaveLength(2);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1); // one for all the gate's waiters
    stop.abort();
    expect(await Promise.all(waiting)).toEqual(['ETL_INTERRUPTED', 'ETL_INTERRUPTED']);
    await expect(w.acquire()).rejects.toMatchObject({ code: 'ETL_INTERRUPTED' });
    // The calls in flight still hold their slots and give them back as before.
    expect(w.free).toBe(0);
    got.splice(0).forEach((r) => r());
    await vi.advanceTimersByTimeAsync(60_001);
    expect(w.free).toBe(2);
  });

  it('adds its abort listener only while a call waits', async () => {
    const stop = new AbortController();
    const w = new SlidingWindow({ limit: 1, windowMs: 100, concurrency: 10, now: () => Date.now(), signal: stop.signal });
    for (let night = 0; night < 20; night++) {
      const got = contend(w, 2);
      await flush();
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
      got[0]!();
      await vi.advanceTimersByTimeAsync(101);
      got[1]!();
      await vi.advanceTimersByTimeAsync(101);
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    }
  });

  it('does nothing on a 429 when not adaptive', async () => {
    const w = new SlidingWindow({ limit: 10, windowMs: 1000, concurrency: 10, adaptive: false, now: () => Date.now() });
    w.penalize(5000);
    expect(w.limit).toBe(10);
    const got = contend(w, 1);
    await flush();
    expect(got).toHaveLength(1);
  });
});
