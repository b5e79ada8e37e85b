import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateRankRules, readRankObservations } from '../../src/alerts/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { autoNight, autoRun, MID, pipelineFile, rankOn, tasksOf, TOP10 } from './autodepth-helpers.js';
import { killWhenSaid, movingClock, tempDir } from './helpers.js';

const CHILD = fileURLToPath(new URL('./autodepth-kill-child.ts', import.meta.url));

const job = (maxDepth?: number) => `name: autodepth-resume
alerts:
  webhook: "http://127.0.0.1:9/hook"
  rules:
    - rank_drop: 3
    - lost: true
jobs:
  - kind: serp
    name: ranks
    depth: auto
${maxDepth ? `    auto_depth:\n      max_depth: ${maxDepth}\n` : ''}    locations: [2840]
    keywords: [trail running shoes]
    track_domains: [fall.example]
`;

describe('depth: auto: an escalation bought once across a kill, and no alert on a shallow look', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => (tmp = await tempDir('pipeline-autodepth-resume-')));
  afterAll(() => tmp?.cleanup());

  it('killed after posting the escalation, the resumed run collects it and buys it no second time', async () => {
    const dir = `${tmp.dir}/kill`;
    const pipeline = await pipelineFile(tmp.dir, job(), 'kill.yaml');
    await autoNight(pipeline, dir, '2026-03-01', { 'fall.example': TOP10 });
    const now = movingClock('2026-03-02T03:00:00Z');
    const sandbox = await startSandbox({ seed: 7, now, readyAfterMs: 20, rankProfiles: { 'fall.example': MID } });
    try {
      const env = { ...process.env, PIPELINE_TEST_KILL_AT: 'escalate:middle' };
      const { said } = await killWhenSaid(CHILD, [pipeline.file, dir, sandbox.url, '2026-03-02'], env, 'killed at escalate:middle');
      expect(said).toContain('killed at escalate:middle');
      const s = await autoRun(pipeline, dir, sandbox.url, now);
      expect(s.state).toBe('completed');
      const tasks = await withWarehouse(dir, (wh) => tasksOf(wh, s.runId));
      expect(tasks.map((t) => [t.reason, t.state])).toEqual([
        ['auto:seen', 'collected'],
        ['auto:escalation', 'collected'],
      ]);
      // One escalation POST in the ledger: the resumed run found its tag and posted nothing more.
      const posts = await withWarehouse(dir, (wh) =>
        wh.all<{ n: number }>(`select count(*)::int as n from ledger where run_id = $1 and method = 'POST' and path like '%task_post'`, [
          s.runId,
        ]),
      );
      expect(posts[0]!.n).toBe(2);
      expect((await rankOn(dir, 'trail running shoes', 'fall.example', '2026-03-02'))!.checked_depth).toBe(100);
    } finally {
      await sandbox.close();
    }
  }, 55_000);

  it('a look shallower than the previous rank (max_depth lowered) raises neither lost nor rank_drop', async () => {
    const dir = `${tmp.dir}/shallow`;
    const first = await pipelineFile(tmp.dir, job(), 'first.yaml');
    await autoNight(first, dir, '2026-03-01', { 'fall.example': MID });
    const before = await rankOn(dir, 'trail running shoes', 'fall.example', '2026-03-01');
    expect(before!.rank).toBeGreaterThan(30);
    const lowered = await pipelineFile(tmp.dir, job(30), 'lowered.yaml');
    const s = await autoNight(lowered, dir, '2026-03-02', { 'fall.example': MID });
    const tasks = await withWarehouse(dir, (wh) => tasksOf(wh, s.runId));
    // Seen deeper than max_depth: the look is capped there, and no escalation (it is max_depth).
    expect(tasks.map((t) => [t.reason, t.depth])).toEqual([['auto:seen', 30]]);
    expect(await rankOn(dir, 'trail running shoes', 'fall.example', '2026-03-02')).toMatchObject({ is_lost: true, checked_depth: 30 });
    const observations = await withWarehouse(dir, (wh) => readRankObservations(wh, { pipeline: lowered.name, runId: s.runId }));
    expect(observations).toHaveLength(1);
    const drafts = evaluateRankRules(observations, lowered.alerts!.rules, { pipeline: lowered.name, runId: s.runId, intervalDays: 1 });
    expect(drafts).toEqual([]);
  }, 55_000);
});
