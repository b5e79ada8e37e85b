import { describe, expect, it } from 'vitest';
import { ServerClock } from '../../../src/client/server-clock.js';

const at = (iso: string) => Date.parse(iso);

describe('ServerClock: the service clock from Date headers', () => {
  it('knows nothing before an answer', () => {
    const c = new ServerClock();
    expect(c.known).toBe(false);
    expect(c.lower(0)).toBeNull();
  });

  it('bounds the service clock by each answer and narrows with more answers', () => {
    const c = new ServerClock();
    // Our clock 10 s ahead; an answer made at 12:00:00.700 service time, 100 ms round trip.
    const local = at('2026-01-01T12:00:10.650Z');
    c.observe('Thu, 01 Jan 2026 12:00:00 GMT', local, local + 100);
    expect(c.lower(local + 100)).toBe(at('2026-01-01T12:00:00.000Z')); // surely reached
    expect(c.upper(local)).toBe(at('2026-01-01T12:00:01.000Z')); // surely not reached
    // A second answer made at 12:00:01.050 narrows the lower bound.
    const l2 = at('2026-01-01T12:00:11.000Z');
    c.observe('Thu, 01 Jan 2026 12:00:01 GMT', l2, l2 + 100);
    expect(c.lower(l2 + 100)).toBeGreaterThan(at('2026-01-01T12:00:00.900Z'));
    expect(c.lower(l2 + 100)!).toBeLessThanOrEqual(at('2026-01-01T12:00:01.150Z'));
  });

  it('starts over when the clocks jump (answers no longer agree), and ignores a missing or bad header', () => {
    const c = new ServerClock();
    c.observe('Thu, 01 Jan 2026 12:00:00 GMT', 0, 10);
    c.observe('Fri, 02 Jan 2026 12:00:00 GMT', 20, 30);
    expect(c.lower(30)).toBe(at('2026-01-02T12:00:00Z'));
    c.observe(undefined, 40, 50);
    c.observe('not a date', 40, 50);
    expect(c.lower(30)).toBe(at('2026-01-02T12:00:00Z'));
  });
});
