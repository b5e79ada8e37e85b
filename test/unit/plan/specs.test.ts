import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { planPipeline } from '../../../src/plan/index.js';

const plan = (jobYaml: string) => planPipeline(parsePipeline(`name: p\njobs:\n${jobYaml}`, 'p.yaml', {}), 'run-1');

describe('job kinds become task bodies packed to the service limits', () => {
  it('AI volume packs 1000 keywords a request, repeats dropped after lower-casing', () => {
    const kws = Array.from({ length: 1500 }, (_, i) => `k${i}`);
    const p = plan(`  - kind: ai_volume\n    locations: [2840]\n    keywords: [${[...kws, 'K1', 'K2'].join(', ')}]\n`);
    expect(p.tasks.map((t) => (t.spec.keywords as string[]).length)).toEqual([1000, 500]);
    expect(p.tasks.every((t) => t.endpoint.id === 'ai_optimization.ai_keyword_data.keywords_search_volume.live')).toBe(true);
    expect(p.duplicatesDropped).toBe(2);
    expect(p.batches).toHaveLength(2); // live: one task a call
  });

  it('trends keep the written order in groups of 5, one request per group and location', () => {
    const p = plan(
      `  - kind: trends\n    function: demography\n    locations: [2840, 2826]\n    keywords: [zeta, alpha, mid, beta, omega, last]\n    date_from: 2026-01-01\n`,
    );
    expect(p.tasks.map((t) => [t.spec.location_code, t.spec.keywords])).toEqual([
      [2840, ['zeta', 'alpha', 'mid', 'beta', 'omega']],
      [2840, ['last']],
      [2826, ['zeta', 'alpha', 'mid', 'beta', 'omega']],
      [2826, ['last']],
    ]);
    expect(p.tasks[0]!.spec.date_from).toBe('2026-01-01');
    expect(p.tasks[0]!.endpoint.id).toBe('keywords_data.svc_trends.demography.live');
  });

  it('standard jobs go to task_post in POSTs of 100, live ones to the live endpoint; priority 2 only on task_post', () => {
    const kws = Array.from({ length: 150 }, (_, i) => `s${i}`).join(', ');
    const std = plan(`  - kind: serp\n    priority: 2\n    locations: [2840]\n    keywords: [${kws}]\n`);
    expect(std.batches.map((b) => [b.endpoint.id, b.tasks.length])).toEqual([
      ['serp.engA.organic.task_post', 100],
      ['serp.engA.organic.task_post', 50],
    ]);
    expect(std.tasks[0]!.spec.priority).toBe(2);
    const live = plan(`  - kind: serp\n    mode: live\n    priority: 2\n    locations: [2840]\n    keywords: [a, b]\n`);
    expect(live.batches.map((b) => [b.endpoint.id, b.tasks.length])).toEqual([
      ['serp.engA.organic.live.advanced', 1],
      ['serp.engA.organic.live.advanced', 1],
    ]);
    expect(live.tasks[0]!.spec.priority).toBeUndefined();
  });

  it('labs: one request per keyword (or target) and place; keyword_ideas sends a keywords list', () => {
    const p = plan(
      `  - kind: labs\n    function: keyword_ideas\n    keywords: [a, B, b]\n    locations: [2840]\n    languages: [en, de]\n`,
    );
    expect(p.tasks.map((t) => [t.spec.keywords, t.spec.language_code])).toEqual([
      [['a'], 'en'],
      [['b'], 'en'],
      [['a'], 'de'],
      [['b'], 'de'],
    ]);
    expect(p.duplicatesDropped).toBe(2);
  });

  it('a generic job fills its template per keyword and target, crossed with places, then adds its explicit tasks', () => {
    const p = plan(
      [
        '  - kind: endpoint',
        '    endpoint: svc_labs.engA.domain_intersection.live',
        '    params: { target1: "{target}", target2: rival.com, filters: [["keyword_data.keyword", "like", "%{keyword}%"]] }',
        '    targets: [a.com, b.com]',
        '    keywords: [shoe]',
        '    locations: [2840]',
        '    tasks:',
        '      - { target1: c.com, target2: d.com }',
        '',
      ].join('\n'),
    );
    expect(p.tasks.map(({ spec: { tag: _t, ...rest } }) => rest)).toEqual([
      { location_code: 2840, target1: 'a.com', target2: 'rival.com', filters: [['keyword_data.keyword', 'like', '%shoe%']] },
      { location_code: 2840, target1: 'b.com', target2: 'rival.com', filters: [['keyword_data.keyword', 'like', '%shoe%']] },
      { target1: 'c.com', target2: 'd.com' },
    ]);
  });

  it('a "{keywords}" value becomes keyword lists packed to keywords_per_task', () => {
    const p = plan(
      `  - kind: endpoint\n    endpoint: keywords_data.engA.search_volume.task_post\n    params: { keywords: "{keywords}", location_code: 2840 }\n    keywords: [a, b, c, d, e]\n    keywords_per_task: 2\n`,
    );
    expect(p.tasks.map((t) => t.spec.keywords)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(p.batches).toHaveLength(1);
  });

  it('tags are deterministic per run and differ per task', () => {
    const y = `  - kind: backlinks\n    targets: [a.com, b.com, a.com]\n`;
    const a = plan(y);
    expect(a.tasks.map((t) => t.tag)).toEqual(plan(y).tasks.map((t) => t.tag));
    expect(new Set(a.tasks.map((t) => t.tag)).size).toBe(2);
  });
});
