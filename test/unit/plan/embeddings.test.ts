import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { planEmbeddings, planPipeline, summarizePlan } from '../../../src/plan/index.js';

const pipeline = parsePipeline(
  `name: emb
jobs:
  - kind: serp
    locations: [2840]
    keywords: [running shoes, trail shoes, hiking boots for winter]
  - kind: embeddings
    name: vectors
    batch_size: 2
  - kind: embeddings
    name: large
    model: text-embedding-3-large
    dimensions: 1024
`,
  'emb.yaml',
  {},
);

describe('embedding calls in the plan', () => {
  const plan = planPipeline(pipeline, 'plan');

  it('counts the keywords to embed, the calls by batch size and the tokens, priced at the reference rate', () => {
    const [small, large] = planEmbeddings(pipeline, plan.tasks);
    // 'running shoes' 13 chars -> 4 tokens, 'trail shoes' 11 -> 3, 'hiking boots for winter' 23 -> 6
    expect(small).toEqual({
      job: 'vectors',
      model: 'text-embedding-3-small',
      dimensions: 256,
      keywords: 3,
      cached: 0,
      calls: 2,
      tokens: 13,
      cnyPer1kTokens: 0.00032,
      cny: (13 / 1000) * 0.00032,
    });
    expect(large).toMatchObject({
      job: 'large',
      model: 'text-embedding-3-large',
      dimensions: 1024,
      calls: 1,
      tokens: 13,
      cny: (13 / 1000) * 0.00208,
    });
  });

  it('leaves out keywords the cache holds for the same model and dimensions', () => {
    const cache = new Map([['text-embedding-3-small\u0000256', new Set(['running shoes', 'trail shoes'])]]);
    const [small, large] = planEmbeddings(pipeline, plan.tasks, (m, d) => cache.get(`${m}\u0000${d}`) ?? new Set());
    expect(small).toMatchObject({ keywords: 3, cached: 2, calls: 1, tokens: 6 });
    expect(large).toMatchObject({ cached: 0, calls: 1 });
  });

  it('adds the calls to their rate family and the charge to the estimate', () => {
    const prices = [{ endpointId: plan.tasks[0]!.endpoint.id, cnyPerTask: 0.01, source: 'ledger:endpoint' as const }];
    const without = summarizePlan(plan, prices);
    const emb = planEmbeddings(pipeline, plan.tasks);
    const withEmb = summarizePlan(plan, prices, emb);
    expect(withEmb.estimatedCny! - without.estimatedCny!).toBeCloseTo(emb[0]!.cny + emb[1]!.cny, 12);
    expect(withEmb.families.find((f) => f.family === 'v1_other')?.calls).toBe(3);
    expect(withEmb.embeddings).toHaveLength(2);
  });
});
