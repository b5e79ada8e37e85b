import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../../src/config/index.js';
import { ConfigError } from '../../../src/errors.js';
import { planPipeline } from '../../../src/plan/index.js';

/** Parses and plans; anything but a plan or a ConfigError with positions is a failure. */
function planOrRefuse(text: string): 'planned' | 'refused' {
  try {
    const p = parsePipeline(text, 'fuzz.yaml', {});
    const plan = planPipeline(p, 'run');
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
        kind: fc.oneof(fc.constantFrom('serp', 'search_volume'), odd),
        depth: fc.oneof(fc.integer({ min: -5, max: 800 }), value),
        locations: fc.oneof(fc.array(fc.oneof(fc.integer({ min: -1, max: 3000 }), odd), { maxLength: 3 }), value),
        languages: fc.oneof(fc.array(fc.constantFrom('en', 'de', 'English', 'x'), { maxLength: 2 }), value),
        keywords: fc.oneof(fc.array(odd, { maxLength: 30 }), value),
        devices: fc.oneof(fc.array(fc.constantFrom('desktop', 'mobile', 'tablet'), { maxLength: 2 }), value),
        extra_field: value,
      },
      { requiredKeys: [] },
    );
    const file = fc.record({ name: fc.oneof(fc.constantFrom('p', 'nightly-1'), odd), jobs: fc.oneof(fc.array(job, { maxLength: 3 }), value), budget_cny: value }, { requiredKeys: [] });
    fc.assert(fc.property(file, (f) => void planOrRefuse(stringify(f))), { numRuns: 300, seed: 20261122 });
  });

  it('survives raw text, broken YAML, anchors and alias bombs', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]', ...'bcdefg'.split('').map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefg'[i]}`).join(', ')}]`), 'name: x', 'jobs: [*g]'].join('\n');
    expect(planOrRefuse(bomb)).toBe('refused');
    fc.assert(fc.property(fc.string({ maxLength: 400 }), (t) => void planOrRefuse(t)), { numRuns: 300, seed: 7 });
    fc.assert(
      fc.property(fc.array(fc.constantFrom('name: p\n', 'jobs:\n', '  - kind: serp\n', '    locations: [2840]\n', '    keywords: [a, b\n', '    keywords: [a]\n', '  &x ', '*x\n', '- ', ': ', '"', '\t'), { maxLength: 12 }), (parts) => void planOrRefuse(parts.join(''))),
      { numRuns: 300, seed: 11 },
    );
  });

  it('plans a valid file of 50,000 keywords into POSTs of 100', () => {
    const keywords = Array.from({ length: 50_000 }, (_, i) => `k${i}`);
    const plan = planPipeline(parsePipeline(stringify({ name: 'big', jobs: [{ kind: 'serp', locations: [2840], keywords }] }), 'big.yaml', {}), 'r');
    expect(plan.tasks).toHaveLength(50_000);
    expect(plan.batches).toHaveLength(500);
  });
});
