import { describe, expect, it } from 'vitest';
import { aiRequestDefaults, aiTransform } from '../../../src/sandbox/ai-variant.js';
import { endpointById as endpoint } from '../../../src/sandbox/spec/index.js';

describe('.ai transformation rules (spec, AI-optimized response)', () => {
  it('removes fields whose value is empty, null or false, at every depth', () => {
    expect(aiTransform({ a: '', b: null, c: false, d: [], e: {}, f: { g: null }, h: 0, i: true, j: 'x', k: [null, '', 1] })).toEqual({
      h: 0,
      i: true,
      j: 'x',
      k: [1],
    });
  });

  it('keeps at most three decimals on floats and leaves integers alone', () => {
    expect(aiTransform({ a: 0.123456, b: 2.0005, c: 12, d: -1.23456 })).toEqual({ a: 0.123, b: 2.001, c: 12, d: -1.235 });
  });

  it('removes position and xpath', () => {
    expect(aiTransform({ items: [{ type: 'organic', position: 'left', xpath: '/html/body', rank_group: 1 }] })).toEqual({
      items: [{ type: 'organic', rank_group: 1 }],
    });
  });

  it('turns monthly_searches into an object keyed by yyyy-mm with integer values', () => {
    const monthly = [
      { year: 2026, month: 2, search_volume: 1000 },
      { year: 2025, month: 12, search_volume: 1234.6 },
    ];
    expect(aiTransform({ monthly_searches: monthly })).toEqual({ monthly_searches: { '2026-02': 1000, '2025-12': 1235 } });
  });

  it('defaults depth (SERP and listings) or limit (labs, backlinks) to 10 when omitted, and keeps given values', () => {
    const serp = endpoint('serp.engA.organic.live.advanced');
    expect(aiRequestDefaults(serp, [{ keyword: 'a' }, { keyword: 'b', depth: 30 }])).toEqual([
      { keyword: 'a', depth: 10 },
      { keyword: 'b', depth: 30 },
    ]);
    const labs = endpoint('svc_labs.engA.ranked_keywords.live');
    expect(aiRequestDefaults(labs, [{ target: 'x.com' }])).toEqual([{ target: 'x.com', limit: 10 }]);
    const volume = endpoint('keywords_data.engA_ads.search_volume.live');
    expect(aiRequestDefaults(volume, [{ keywords: ['a'] }])).toEqual([{ keywords: ['a'] }]);
  });
});
