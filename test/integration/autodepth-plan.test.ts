import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autoDepthOf } from '../../src/jobs/index.js';
import { isSweepNight, nightOf, seriesKey } from '../../src/plan/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { autoNight, GONE, pipelineFile, TOP10 } from './autodepth-helpers.js';
import { tempDir } from './helpers.js';
import { cli } from './plan-helpers.js';

const yaml = `name: autodepth-plan
jobs:
  - kind: serp
    name: seen
    depth: auto
    locations: [2840]
    keywords: [trail running shoes]
    track_domains: [fall.example]
  - kind: serp
    name: unseen
    depth: auto
    locations: [2840]
    keywords: [best running shoes, waterproof hiking boots]
    track_domains: [nowhere.example]
  - kind: serp
    name: new
    depth: auto
    locations: [2840]
    keywords: [rain jacket]
    track_domains: [fall.example]
`;

describe('pipeline plan of a depth: auto pipeline', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let sandbox: SandboxHandle;
  let file: string;
  beforeAll(async () => {
    tmp = await tempDir('pipeline-autodepth-plan-');
    const first = await pipelineFile(tmp.dir, yaml.split('  - kind: serp\n    name: new')[0]!, 'first.yaml');
    // One night checks the first three series (all swept): fall.example in the top 10, nowhere.example
    // beyond 100; `rain jacket` was never checked, so tonight sweeps it.
    await autoNight(first, tmp.dir, '2026-03-01', { 'fall.example': TOP10, 'nowhere.example': GONE });
    file = (await pipelineFile(tmp.dir, yaml)).file;
    sandbox = await startSandbox({ readyAfterMs: 0 });
  }, 55_000);
  afterAll(async () => {
    await sandbox?.close();
    await tmp?.cleanup();
  });

  it("counts tonight's tasks per depth reason with their CNY, from the warehouse's history", async () => {
    const env = { SVC_API_KEY: 'svc_live_testautodepthplan', SVC_BASE_URL: sandbox.url };
    const json = await cli(['plan', file, '--warehouse', tmp.dir, '--json'], env);
    expect(json.code).toBe(0);
    const s = JSON.parse(json.stdout) as { depthReasons: { reason: string; tasks: number; depth: number; cny: number | null }[] };
    // Tonight is today's UTC day (the plan's clock): a series whose sweep night it is sweeps.
    const sweeps = (k: string) =>
      isSweepNight(seriesKey(k, 2840, 'en', 'desktop', 'engA'), nightOf(new Date()), autoDepthOf({}).sweep_every);
    const want = new Map<string, number>([['auto:sweep', 1]]);
    const add = (k: string, reason: string) => {
      const r = sweeps(k) ? 'auto:sweep' : reason;
      want.set(r, (want.get(r) ?? 0) + 1);
    };
    add('trail running shoes', 'auto:seen');
    add('best running shoes', 'auto:shallow');
    add('waterproof hiking boots', 'auto:shallow');
    expect(new Map(s.depthReasons.map((r) => [r.reason, r.tasks]))).toEqual(want);
    const by = new Map(s.depthReasons.map((r) => [r.reason, r]));
    expect(by.get('auto:sweep')!.depth).toBe(100);
    if (by.has('auto:shallow')) expect(by.get('auto:shallow')!.depth).toBe(10);
    if (by.has('auto:seen')) expect(by.get('auto:seen')!.depth).toBeLessThanOrEqual(20);
    const text = await cli(['plan', file, '--warehouse', tmp.dir], env);
    expect(text.stdout).toMatch(/depth_reason/);
    expect(text.stdout).toMatch(/auto:sweep/);
  }, 55_000);
});
