import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { ConfigError } from '../../../src/errors.js';
import { validateTasks } from '../../../src/client/index.js';
import { planPipeline } from '../../../src/plan/index.js';

/** Parses and plans; anything but a plan or a ConfigError with positions is a failure. */
const plannedKinds = new Set<string>();

function planOrRefuse(text: string): 'planned' | 'refused' {
  try {
    const p = parsePipeline(text, 'fuzz.yaml', {});
    const plan = planPipeline(p, 'run');
    for (const j of p.jobs) plannedKinds.add(j.kind);
    for (const b of plan.batches) expect(b.tasks.length).toBeLessThanOrEqual(b.endpoint.maxTasksPerPost ?? 1);
    return 'planned';
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    for (const i of (err as ConfigError).issues) {
      expect(i.file).toBe('fuzz.yaml');
      expect(i.line).toBeGreaterThanOrEqual(1);
      expect(typeof i.rule).toBe('string');
      expect(i.rule.length).toBeGreaterThan(0);
    }
    return 'refused';
  }
}

const odd = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('\u202e', '\u0000', '😀', 'ß', '%25', '+'));
const value = fc.oneof(odd, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(odd, { maxLength: 3 }));

describe('pipeline plan on random and malformed files', () => {
  it('plans or refuses with file, line and rule: never a crash', () => {
    const job = fc.record(
      {
        kind: fc.oneof(
          fc.constantFrom(
            'serp',
            'search_volume',
            'keywords_for_site',
            'keywords_for_keywords',
            'ad_traffic',
            'trends',
            'labs',
            'backlinks',
            'on_page',
            'ai_volume',
            'llm_responses',
            'embeddings',
            'endpoint',
          ),
          odd,
        ),
        mode: fc.oneof(fc.constantFrom('standard', 'live'), value),
        type: fc.oneof(fc.constantFrom('organic', 'news', 'events', 'maps'), value),
        function: fc.oneof(fc.constantFrom('related_keywords', 'ranked_keywords', 'explore', 'referring_domains'), value),
        targets: fc.oneof(fc.array(fc.oneof(fc.constantFrom('example.com', 'a b'), odd), { maxLength: 3 }), value),
        endpoint: fc.oneof(
          fc.constantFrom('serp.engA.organic.task_post', 'backlinks.referring_domains.live', 'merchant.engA.products.task_post', 'nope'),
          odd,
        ),
        params: fc.oneof(
          fc.dictionary(
            fc.constantFrom('keyword', 'target', 'keywords', 'depth', 'limit'),
            fc.oneof(fc.constantFrom('{keyword}', '{target}', '{keywords}'), value),
          ),
          value,
        ),
        tasks: fc.oneof(fc.array(fc.dictionary(fc.constantFrom('keyword', 'target', 'location_code'), value), { maxLength: 2 }), value),
        prompts: fc.oneof(fc.array(odd, { maxLength: 2 }), value),
        models: fc.oneof(fc.array(fc.constantFrom('llm-alpha', 'x'), { maxLength: 2 }), value),
        bid: value,
        depth: fc.oneof(fc.integer({ min: -5, max: 800 }), value),
        locations: fc.oneof(fc.array(fc.oneof(fc.integer({ min: -1, max: 3000 }), odd), { maxLength: 3 }), value),
        languages: fc.oneof(fc.array(fc.constantFrom('en', 'de', 'English', 'x'), { maxLength: 2 }), value),
        keywords: fc.oneof(fc.array(odd, { maxLength: 30 }), value),
        devices: fc.oneof(fc.array(fc.constantFrom('desktop', 'mobile', 'tablet'), { maxLength: 2 }), value),
        extra_field: value,
      },
      { requiredKeys: [] },
    );
    const file = fc.record(
      { name: fc.oneof(fc.constantFrom('p', 'nightly-1'), odd), jobs: fc.oneof(fc.array(job, { maxLength: 3 }), value), budget_cny: value },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(file, (f) => void planOrRefuse(stringify(f))),
      { numRuns: 600, seed: 20261122 },
    );
  });

  it('plans near-valid files of every kind into tasks the catalog accepts, or refuses them with positions', () => {
    const kw = fc.array(fc.oneof(fc.constantFrom('running shoes', 'Trail  Shoes', 'ß', '😀 shoe', ' '), fc.string({ maxLength: 20 })), {
      minLength: 1,
      maxLength: 30,
    });
    const loc = fc.array(fc.oneof(fc.constantFrom(2840, 2826, 'London'), fc.integer({ min: -2, max: 5000 })), {
      minLength: 1,
      maxLength: 2,
    });
    const targets = fc.array(fc.oneof(fc.constantFrom('a.com', 'b.org', 'https://c.net/x'), odd), { minLength: 1, maxLength: 3 });
    const job = fc.oneof(
      fc.record({
        kind: fc.constant('serp'),
        keywords: kw,
        locations: loc,
        mode: fc.constantFrom('standard', 'live'),
        type: fc.constantFrom('organic', 'news', 'events'),
        depth: fc.integer({ min: 0, max: 701 }),
      }),
      fc.record({ kind: fc.constant('search_volume'), keywords: kw, locations: loc, mode: fc.constantFrom('standard', 'live') }),
      fc.record({
        kind: fc.constant('keywords_for_keywords'),
        keywords: kw,
        locations: loc,
        keywords_per_task: fc.integer({ min: 0, max: 21 }),
      }),
      fc.record({ kind: fc.constant('trends'), keywords: kw, locations: fc.array(fc.constantFrom(2840, 2826), { maxLength: 2 }) }),
      fc.record({
        kind: fc.constant('labs'),
        function: fc.constantFrom('related_keywords', 'keyword_ideas'),
        keywords: kw,
        locations: loc,
      }),
      fc.record({ kind: fc.constant('labs'), function: fc.constant('ranked_keywords'), targets, locations: loc }),
      fc.record({ kind: fc.constant('ai_volume'), keywords: kw, locations: loc }),
      fc.record({ kind: fc.constant('backlinks'), targets }),
      fc.record({ kind: fc.constant('on_page'), targets, max_crawl_pages: fc.integer({ min: 0, max: 1001 }) }),
      fc.record({
        kind: fc.constant('llm_responses'),
        prompts: fc.array(fc.string({ maxLength: 60 }), { minLength: 1, maxLength: 3 }),
        models: fc.constant(['llm-alpha']),
      }),
      fc.record({
        kind: fc.constant('endpoint'),
        endpoint: fc.constant('serp.engA.organic.task_post'),
        params: fc.constant({ keyword: '{keyword}', location_code: 2840, language_code: 'en' }),
        keywords: kw,
      }),
      fc.record({ kind: fc.constant('embeddings'), dimensions: fc.integer({ min: 4, max: 4000 }) }),
    );
    const file = fc.record({ name: fc.constant('p'), jobs: fc.array(job, { minLength: 1, maxLength: 4 }) });
    fc.assert(
      fc.property(file, (f) => {
        if (planOrRefuse(stringify(f)) !== 'planned') return;
        // What the planner makes must pass the endpoint's own request rules (checked again before any call).
        const plan = planPipeline(parsePipeline(stringify(f), 'fuzz.yaml', {}), 'run');
        for (const b of plan.batches)
          validateTasks(
            b.endpoint,
            b.tasks.map((t) => t.spec),
          );
      }),
      { numRuns: 500, seed: 20261122 },
    );
    // The generator reaches past validation into the planner for most kinds, not only refusals.
    expect(plannedKinds.size).toBeGreaterThanOrEqual(10);
  });

  it('survives raw text, broken YAML, anchors and alias bombs', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...'bcdefg'.split('').map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefg'[i]}`).join(', ')}]`),
      'name: x',
      'jobs: [*g]',
    ].join('\n');
    expect(planOrRefuse(bomb)).toBe('refused');
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (t) => void planOrRefuse(t)),
      { numRuns: 300, seed: 7 },
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom(
            'name: p\n',
            'jobs:\n',
            '  - kind: serp\n',
            '    locations: [2840]\n',
            '    keywords: [a, b\n',
            '    keywords: [a]\n',
            '  &x ',
            '*x\n',
            '- ',
            ': ',
            '"',
            '\t',
          ),
          { maxLength: 12 },
        ),
        (parts) => void planOrRefuse(parts.join('')),
      ),
      { numRuns: 300, seed: 11 },
    );
  });

  it('plans a valid file of 50,000 keywords into POSTs of 100', () => {
    const keywords = Array.from({ length: 50_000 }, (_, i) => `k${i}`);
    const plan = planPipeline(
      parsePipeline(stringify({ name: 'big', jobs: [{ kind: 'serp', locations: [2840], keywords }] }), 'big.yaml', {}),
      'r',
    );
    expect(plan.tasks).toHaveLength(50_000);
    expect(plan.batches).toHaveLength(500);
  });
});
