import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { autoDepthOf } from '../../../src/jobs/index.js';
import {
  chooseDepth,
  depthFor,
  isSweepNight,
  depthReasonLines,
  escalationDepth,
  planPipeline,
  seriesKey,
  type DepthHistory,
} from '../../../src/plan/index.js';

const S = autoDepthOf({});
const KEY = seriesKey('trail running shoes', 2840, 'en', 'desktop', 'engA');
/** A night that is not KEY's sweep night. */
const NIGHT = [0, 1, 2, 3, 4, 5, 6].find((n) => !isSweepNight(KEY, n, S.sweep_every))!;
const history = (deepest: number, seen: { domain: string; rank: number }[]): DepthHistory => ({
  series: new Map([[KEY, { lastDate: '2026-03-01', deepest, seen }]]),
  night: NIGHT,
});

describe('depth: auto rules', () => {
  it('seen at r: the block of r plus the margin, the deepest tracked domain, capped at max_depth', () => {
    expect(S).toEqual({ max_depth: 100, margin: 2, sweep_every: 14, competitors: [], competitor_depth: 30 });
    expect(depthFor(5, S)).toBe(10);
    expect(depthFor(10, S)).toBe(20);
    expect(depthFor(11, S)).toBe(20);
    expect(depthFor(95, S)).toBe(100);
    expect(depthFor(8, S)).toBe(10);
    expect(depthFor(19, S)).toBe(30);
    const c = chooseDepth(
      S,
      ['a.example', 'b.example'],
      KEY,
      history(100, [
        { domain: 'a.example', rank: 3 },
        { domain: 'b.example', rank: 42 },
      ]),
    );
    expect(c).toMatchObject({ depth: 50, reason: 'auto:seen' });
  });

  it('none seen: the first block; never looked at max_depth: a sweep; a domain not tracked does not count', () => {
    expect(chooseDepth(S, ['a.example'], KEY, history(100, [{ domain: 'other.example', rank: 2 }]))).toMatchObject({
      depth: 10,
      reason: 'auto:shallow',
    });
    expect(chooseDepth(S, ['a.example'], KEY, history(20, [{ domain: 'a.example', rank: 2 }]))).toMatchObject({
      depth: 100,
      reason: 'auto:sweep',
    });
    expect(chooseDepth(S, ['a.example'], KEY, undefined)).toMatchObject({ depth: 100, reason: 'auto:sweep' });
  });

  it('sweeps spread: one night in N per series, about 1/N of the series a night', () => {
    const keys = Array.from({ length: 700 }, (_, i) => seriesKey(`kw ${i}`, 2840, 'en', 'desktop', 'engA'));
    for (const k of keys.slice(0, 20)) expect([0, 1, 2, 3, 4, 5, 6].filter((n) => isSweepNight(k, 20000 + n, 7))).toHaveLength(1);
    const tonight = keys.filter((k) => isSweepNight(k, 20000, 7)).length;
    expect(tonight).toBeGreaterThan(60);
    expect(tonight).toBeLessThan(140);
  });

  it('escalates a seen series whose domain is absent within tonight, never a sweep or a shallow one', () => {
    const seen = chooseDepth(S, ['a.example'], KEY, history(100, [{ domain: 'a.example', rank: 5 }]));
    expect(escalationDepth(seen, S, new Set())).toBe(100);
    expect(escalationDepth(seen, S, new Set(['a.example']))).toBe(0);
    const shallow = chooseDepth(S, ['a.example'], KEY, history(100, []));
    expect(escalationDepth(shallow, S, new Set())).toBe(0);
  });

  it('a competitor is followed to competitor_depth: it raises the depth within it, its fall buys the series again to it', () => {
    const C = { ...S, competitors: ['rival.example'], competitor_depth: 30 };
    const tracked = ['own.example', 'rival.example'];
    // Beyond competitor_depth at the last check: it does not raise tonight's depth.
    const far = chooseDepth(C, tracked, KEY, history(100, [{ domain: 'rival.example', rank: 57 }]));
    expect(far).toMatchObject({ depth: 10, reason: 'auto:shallow' });
    // Followed by the same rank without the setting: the block of 57 + 2.
    expect(chooseDepth(S, tracked, KEY, history(100, [{ domain: 'rival.example', rank: 57 }]))).toMatchObject({ depth: 60 });
    // Within it: the block of its rank plus the margin, at most competitor_depth (29 + 2 would be 40).
    const near = chooseDepth(C, tracked, KEY, history(100, [{ domain: 'rival.example', rank: 29 }]));
    expect(near).toMatchObject({ depth: 30, reason: 'auto:seen' });
    const mid = chooseDepth(C, tracked, KEY, history(100, [{ domain: 'rival.example', rank: 12 }]));
    expect(mid).toMatchObject({ depth: 20, reason: 'auto:seen' });
    // It fell past tonight's 20: bought again to 30, not 100; at 30 already, nothing deeper to buy.
    expect(escalationDepth(mid, C, new Set())).toBe(30);
    expect(escalationDepth(near, C, new Set())).toBe(0);
    // Your own domain, absent too: bought again to max_depth, whatever the competitor asks.
    const both = chooseDepth(
      C,
      tracked,
      KEY,
      history(100, [
        { domain: 'own.example', rank: 4 },
        { domain: 'rival.example', rank: 12 },
      ]),
    );
    expect(both.depth).toBe(20);
    expect(escalationDepth(both, C, new Set(['rival.example']))).toBe(100);
    expect(escalationDepth(both, C, new Set(['own.example']))).toBe(30);
  });

  it('the config: auto needs track_domains (up to 10), an organic type; auto_depth only with auto; the plan tags by series', () => {
    const yaml = (extra: string) => `name: a\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [trail running shoes]\n${extra}`;
    expect(() => parsePipeline(yaml('    depth: auto\n'), 'a.yaml', {})).toThrow(/track_domains/);
    expect(() => parsePipeline(yaml('    depth: 10\n    auto_depth: { margin: 5 }\n'), 'a.yaml', {})).toThrow(/auto_depth/);
    const many = Array.from({ length: 11 }, (_, i) => `d${i}.example`).join(', ');
    expect(() => parsePipeline(yaml(`    depth: auto\n    track_domains: [${many}]\n`), 'a.yaml', {})).toThrow(/at most 10/);
    expect(() =>
      parsePipeline(yaml('    depth: auto\n    track_domains: [a.example]\n    auto_depth: { competitors: [b.example] }\n'), 'a.yaml', {}),
    ).toThrow(/a.yaml:8:33  jobs\[0\]\.auto_depth\.competitors\[0\]: 'b\.example' is not in track_domains/);
    expect(() =>
      parsePipeline(
        yaml('    depth: auto\n    track_domains: [a.example]\n    auto_depth: { max_depth: 50, competitor_depth: 60 }\n'),
        'a.yaml',
        {},
      ),
    ).toThrow(/competitor_depth 60 is deeper than max_depth 50/);
    // Not written, competitor_depth follows a max_depth below its default of 30.
    const shallow = parsePipeline(
      yaml('    depth: auto\n    track_domains: [a.example]\n    auto_depth: { max_depth: 20 }\n'),
      'a.yaml',
      {},
    );
    const job = shallow.jobs[0]!;
    expect(job.kind === 'serp' && autoDepthOf(job)).toMatchObject({ max_depth: 20, competitor_depth: 20 });
    const p = parsePipeline(yaml('    depth: auto\n    auto_depth: { margin: 0 }\n    track_domains: [a.example]\n'), 'a.yaml', {});
    const a = planPipeline(p, 'run-1', undefined, history(100, [{ domain: 'a.example', rank: 5 }]));
    const b = planPipeline(p, 'run-1', undefined, history(100, []));
    expect(a.tasks[0]).toMatchObject({ depthReason: 'auto:seen', spec: { depth: 10 } });
    expect(b.tasks[0]).toMatchObject({ depthReason: 'auto:shallow', spec: { depth: 10 } });
    // The tag names the series, not tonight's depth: a resumed run finds its task.
    expect(a.tasks[0]!.tag).toBe(b.tasks[0]!.tag);
  });

  it('the plan prices an expected escalation at the deepest its seen domains can call for: competitor_depth for a competitor alone', () => {
    const yaml = `name: a
jobs:
  - kind: serp
    depth: auto
    locations: [2840]
    keywords: [k one, k two, k three]
    track_domains: [own.example, rival.example]
    auto_depth: { competitors: [rival.example] }
`;
    const p = parsePipeline(yaml, 'a.yaml', {});
    const key = (k: string) => seriesKey(k, 2840, 'en', 'desktop', 'engA');
    const night = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].find((n) =>
      ['k one', 'k two', 'k three'].every((k) => !isSweepNight(key(k), n, S.sweep_every)),
    )!;
    const h: DepthHistory = {
      night,
      series: new Map([
        [key('k one'), { lastDate: '2026-03-01', deepest: 100, seen: [{ domain: 'own.example', rank: 4 }] }],
        [key('k two'), { lastDate: '2026-03-01', deepest: 100, seen: [{ domain: 'rival.example', rank: 12 }] }],
        [key('k three'), { lastDate: '2026-03-01', deepest: 100, seen: [{ domain: 'rival.example', rank: 27 }] }],
      ]),
    };
    const plan = planPipeline(p, 'run-1', undefined, h);
    expect(plan.tasks.map((t) => [t.spec.keyword, t.spec.depth])).toEqual([
      ['k one', 10],
      ['k two', 20],
      ['k three', 30],
    ]);
    const lines = depthReasonLines(plan, [{ endpointId: plan.tasks[0]!.endpoint.id, cnyPerTask: 1, source: 'rates' }], p.jobs, 0.5);
    // Half of the 3 seen tasks escalated on past nights: 1.5 expected tonight, spread over the two that
    // can (k one to 100, k two to its competitor's 30); k three is at 30 already.
    expect(lines.find((l) => l.reason === 'auto:escalation')).toMatchObject({ tasks: 2, depth: 65 });
    // A rate of 1 over tasks of which only two have room: at most one escalation each.
    expect(depthReasonLines(plan, [{ endpointId: plan.tasks[0]!.endpoint.id, cnyPerTask: 1, source: 'rates' }], p.jobs, 1)).toContainEqual(
      expect.objectContaining({ reason: 'auto:escalation', tasks: 2, depth: 65 }),
    );
  });
});
