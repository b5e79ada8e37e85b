import { describe, expect, it } from 'vitest';
import { UNSEEN_ITEM_TYPES } from '../../../src/sandbox/serp-drift.js';
import { buildSerpResult } from '../../../src/sandbox/serp-result.js';

const at = new Date('2026-05-04T09:30:00Z');
const keywords = Array.from({ length: 300 }, (_, i) => `trail shoe model ${i}`);
const serps = (drift: number, seed = 1) =>
  keywords.map((keyword) => buildSerpResult({ seed, engine: 'engA', params: { keyword, location_code: 2840 }, at, drift }));
const USUAL_STAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+00:00$/;

function forms(r: ReturnType<typeof buildSerpResult>) {
  const stamps = r.items
    .flatMap((i) => [i.timestamp, ...(Array.isArray(i.items) ? i.items.map((x) => (x as { timestamp?: unknown }).timestamp) : [])])
    .filter((t): t is string => typeof t === 'string');
  return {
    unseen: r.items.filter((i) => (UNSEEN_ITEM_TYPES as readonly string[]).includes(i.type)),
    stringRanks: r.items.filter((i) => typeof i.rank_absolute === 'string'),
    otherDates: stamps.filter((t) => !USUAL_STAMP.test(t)),
  };
}

describe('sandbox SERP drift: forms real bodies have, served now and then', () => {
  it('serves an unseen item type, numbers as strings and other date forms on a few SERPs, most SERPs none', () => {
    const all = serps(0.05).map(forms);
    const withUnseen = all.filter((f) => f.unseen.length > 0).length;
    const withStrings = all.filter((f) => f.stringRanks.length > 0).length;
    const withDates = all.filter((f) => f.otherDates.length > 0).length;
    for (const n of [withUnseen, withStrings, withDates]) {
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThan(40);
    }
    expect(all.filter((f) => f.unseen.length === 0 && f.stringRanks.length === 0 && f.otherDates.length === 0).length).toBeGreaterThan(240);
    const results = serps(0.05);
    for (const r of results) {
      // organic ranks stay numbers, and an unseen item carries a domain and its ranks so the marts can place it
      expect(
        r.items.filter((i) => i.type === 'organic').every((i) => typeof i.rank_absolute === 'number' && typeof i.rank_group === 'number'),
      ).toBe(true);
      for (const u of forms(r).unseen) expect(u).toMatchObject({ domain: expect.any(String), url: expect.stringMatching(/^https:\/\//) });
      expect(new Set(r.items.map((i) => i.type))).toEqual(new Set(r.item_types));
      expect(r.items.map((i) => Number(i.rank_absolute))).toEqual(r.items.map((_, n) => n + 1));
    }
  });

  it('is deterministic for a seed, differs for another, and is off at 0 (the page is otherwise the same)', () => {
    expect(serps(0.05)).toEqual(serps(0.05));
    const unseenAt = (seed: number) => serps(0.05, seed).flatMap((r, i) => (forms(r).unseen.length ? [i] : []));
    expect(unseenAt(2)).not.toEqual(unseenAt(1));
    const off = serps(0);
    expect(
      off.every((r) => {
        const f = forms(r);
        return f.unseen.length + f.stringRanks.length + f.otherDates.length === 0;
      }),
    ).toBe(true);
    const on = serps(0.05);
    const organic = (r: ReturnType<typeof buildSerpResult>) => r.items.filter((i) => i.type === 'organic').map((i) => i.url);
    expect(on.map(organic)).toEqual(off.map(organic));
  });
});
