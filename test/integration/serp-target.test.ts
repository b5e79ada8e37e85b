import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoint } from '../../src/catalog/index.js';
import { ServiceClient } from '../../src/client/index.js';
import { parsePipeline } from '../../src/config/index.js';
import { planPipeline } from '../../src/plan/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';

/** Issue 16, point 5: SERP `target` is accepted, and organic fields the spec leaves unlisted pass with a warning. */
describe('SERP target and unlisted organic fields', () => {
  let sb: SandboxHandle;
  beforeAll(async () => {
    sb = await startSandbox({ seed: 2 });
  });
  afterAll(() => sb.close());

  it('posts target and an unlisted field to the emulator, warning once about the unlisted one only', async () => {
    const warnings: string[] = [];
    const client = new ServiceClient({
      baseUrl: sb.url,
      apiKey: 'svc_live_testtargets',
      land: async () => {},
      onWarning: (w) => warnings.push(w),
    });
    const task = { keyword: 'running shoes', location_code: 2840, language_code: 'en', target: 'nike.com', calculate_rectangles: true };
    for (let i = 0; i < 2; i++) {
      const r = await client.call(endpoint('serp.engA.organic.task_post'), { tasks: [task] });
      expect(r.outcome.ok).toBe(true);
      expect(r.envelope.tasks![0]!.data).toMatchObject({ target: 'nike.com', calculate_rectangles: true });
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/field 'calculate_rectangles' is not listed by the spec .* sent as written/);
  });

  it('a serp job sends target and its params with every task', () => {
    const p = parsePipeline(
      'name: t\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a, b]\n    target: nike.com\n    params:\n      calculate_rectangles: true\n',
      't.yaml',
      {},
    );
    const plan = planPipeline(p, 'r');
    expect(plan.tasks.map((t) => t.spec)).toEqual([
      expect.objectContaining({ keyword: 'a', target: 'nike.com', calculate_rectangles: true }),
      expect.objectContaining({ keyword: 'b', target: 'nike.com', calculate_rectangles: true }),
    ]);
  });
});
