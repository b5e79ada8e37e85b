import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { planPipeline, taskTag } from '../../../src/plan/index.js';

const yaml = (keywords: string[], extra = '') => `
name: p
jobs:
  - kind: serp
    locations: [2840, "London,England,United Kingdom"]
    languages: [en]
${extra}
    keywords:
${keywords.map((k) => `      - "${k}"`).join('\n')}
`;

describe('planPipeline', () => {
  it('expands keywords × locations, lower-cases and drops repeats', () => {
    const p = parsePipeline(yaml(['Running Shoes', 'running  shoes ', 'trail shoes']), 'p.yaml', {});
    const plan = planPipeline(p, 'run-1');
    expect(plan.tasks).toHaveLength(4);
    expect(plan.duplicatesDropped).toBe(2);
    expect(new Set(plan.tasks.map((t) => t.spec.keyword))).toEqual(new Set(['running shoes', 'trail shoes']));
    const london = plan.tasks.filter((t) => t.spec.location_name === 'London,England,United Kingdom');
    expect(london).toHaveLength(2);
    expect(plan.tasks.every((t) => t.spec.language_code === 'en' && t.spec.depth === 10)).toBe(true); // the spec's default depth
  });

  it('drops a keyword that is a repeat in another Unicode form (NFC), and sends the composed form', () => {
    const p = parsePipeline(yaml(['café', 'cafe\u0301', 'CAFE\u0301 ']), 'p.yaml', {});
    const plan = planPipeline(p, 'run-1');
    expect(plan.tasks).toHaveLength(2); // one keyword x two locations
    expect(plan.duplicatesDropped).toBe(4);
    expect(new Set(plan.tasks.map((t) => t.spec.keyword))).toEqual(new Set(['caf\u00e9']));
  });

  it('drops a keyword that differs only by invisible characters a paste carries, and keeps the joiners words need', () => {
    const p = parsePipeline(
      yaml(['zero width', '\u200bzero width', 'zero\u2060 width', 'zero wi\u00addth\ufeff', 'نیم\u200cفاصله', 'نیمفاصله']),
      'p.yaml',
      {},
    );
    const plan = planPipeline(p, 'run-1');
    expect(plan.duplicatesDropped).toBe(6); // three repeats x two locations
    expect(new Set(plan.tasks.map((t) => t.spec.keyword))).toEqual(new Set(['zero width', 'نیم\u200cفاصله', 'نیمفاصله']));
  });

  it('packs at most 100 tasks per POST', () => {
    const kws = Array.from({ length: 125 }, (_, i) => `kw ${i}`);
    const plan = planPipeline(parsePipeline(yaml(kws), 'p.yaml', {}), 'run-1');
    expect(plan.tasks).toHaveLength(250);
    expect(plan.batches.map((b) => b.tasks.length)).toEqual([100, 100, 50]);
    expect(plan.batches.every((b) => b.endpoint.path === '/v3/serp/engA/organic/task_post')).toBe(true);
  });

  it('tags tasks deterministically per run and echoes the tag in the posted spec', () => {
    const p = parsePipeline(yaml(['a', 'b']), 'p.yaml', {});
    const one = planPipeline(p, 'run-1');
    const again = planPipeline(p, 'run-1');
    const other = planPipeline(p, 'run-2');
    expect(one.tasks.map((t) => t.tag)).toEqual(again.tasks.map((t) => t.tag));
    expect(one.tasks.map((t) => t.tag)).not.toEqual(other.tasks.map((t) => t.tag));
    expect(new Set(one.tasks.map((t) => t.tag)).size).toBe(one.tasks.length);
    for (const t of one.tasks) expect(t.spec.tag).toBe(t.tag);
  });

  it('hashes specs independently of key order', () => {
    expect(taskTag('p', 'r', { a: 1, b: 2 })).toBe(taskTag('p', 'r', { b: 2, a: 1 }));
    expect(taskTag('p', 'r', { a: 1 })).not.toBe(taskTag('p', 'r', { a: 2 }));
  });
});
