import { describe, expect, it } from 'vitest';
import { createRng } from '../../../src/sandbox/prng.js';
import { buildSerpResult } from '../../../src/sandbox/serp-result.js';

const at = (day: string) => new Date(`${day}T09:30:00Z`);
const organicDomains = (seed: number, day: string, extra: Record<string, unknown> = {}) =>
  buildSerpResult({ seed, engine: 'engA', params: { keyword: 'mortgage rates', location_code: 2840, ...extra }, at: at(day) })
    .items.filter((i) => i.type === 'organic')
    .map((i) => String(i.domain));

describe('sandbox prng', () => {
  it('repeats a stream for the same parts and differs for other parts', () => {
    const a = createRng(1, 'x');
    const b = createRng(1, 'x');
    const c = createRng(2, 'x');
    const seqA = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(seqA);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(seqA);
    expect(seqA.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

describe('sandbox SERP generator', () => {
  it('holds distinct domains on every page of 10, even at depth 700', () => {
    const r = buildSerpResult({
      seed: 3,
      engine: 'engC',
      params: { keyword: 'garden tools', location_code: 2826, depth: 700 },
      at: at('2026-05-01'),
    });
    const organic = r.items.filter((i) => i.type === 'organic');
    expect(organic).toHaveLength(700);
    for (let p = 0; p < 70; p++) {
      const page = organic.slice(p * 10, p * 10 + 10).map((i) => String(i.domain));
      expect(new Set(page).size).toBe(10);
    }
    const urls = organic.map((i) => String(i.url));
    expect(new Set(urls).size).toBe(700);
  });

  it('moves ranks a little from one day to the next, keeping most of the top 10', () => {
    const days = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05'];
    const tops = days.map((d) => organicDomains(1, d));
    let changedDays = 0;
    for (let i = 1; i < tops.length; i++) {
      const [prev, cur] = [tops[i - 1]!, tops[i]!];
      if (cur.join() !== prev.join()) changedDays++;
      expect(cur.filter((d) => prev.includes(d)).length).toBeGreaterThanOrEqual(7);
      for (const [pos, d] of cur.entries()) if (prev.includes(d)) expect(Math.abs(prev.indexOf(d) - pos)).toBeLessThanOrEqual(5);
    }
    expect(changedDays).toBeGreaterThan(0);
  });

  it('is stable within a day and differs by seed and device', () => {
    expect(organicDomains(1, '2026-03-01')).toEqual(
      buildSerpResult({
        seed: 1,
        engine: 'engA',
        params: { keyword: 'mortgage rates', location_code: 2840 },
        at: new Date('2026-03-01T23:59:59Z'),
      })
        .items.filter((i) => i.type === 'organic')
        .map((i) => String(i.domain)),
    );
    expect(organicDomains(2, '2026-03-01')).not.toEqual(organicDomains(1, '2026-03-01'));
    const depth60 = (extra: Record<string, unknown>) => organicDomains(1, '2026-03-01', { depth: 60, ...extra });
    expect(depth60({ device: 'mobile' })).not.toEqual(depth60({}));
  });

  it('favours sites of the keyword’s topic', () => {
    const top5 = organicDomains(1, '2026-03-01')
      .slice(0, 5)
      .map((d) => d.replace(/^www\./, ''));
    const finance = ['investopedia.com', 'nerdwallet.com', 'bankrate.com', 'forbes.com', 'bloomberg.com', 'reuters.com', 'zillow.com'];
    expect(top5.filter((d) => finance.includes(d)).length).toBeGreaterThanOrEqual(3);
  });

  it('fills the result header from the task with the service defaults', () => {
    const r = buildSerpResult({
      seed: 1,
      engine: 'engB',
      params: { keyword: 'Kaffee Maschine', location_name: 'Germany' },
      at: at('2026-03-01'),
    });
    expect(r).toMatchObject({
      keyword: 'Kaffee Maschine',
      location_code: 2276,
      language_code: 'de',
      se_domain: 'engb.com',
      datetime: '2026-03-01 09:30:00 +00:00',
    });
    expect(r.check_url).toContain('q=Kaffee+Maschine');
    expect(r.items.filter((i) => i.type === 'organic')).toHaveLength(10);
  });
});
