import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline, type RunOutcome } from '../../src/run/index.js';
import { nightRunner } from '../../src/schedule/night-runner.js';
import { ScheduleJournal } from '../../src/schedule/schedule-journal.js';
import { Scheduler } from '../../src/schedule/scheduler.js';
import { loadPipeline } from '../../src/config/index.js';
import { testWarehouseModels } from '../../src/models/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { movingClock, silentLogger, tempDir } from './helpers.js';

const KEY = 'svc_live_testdemo';
const PIPELINE = `name: nightly
schedule: "* * * * *"
timezone: UTC
jobs:
  - name: ranks
    kind: serp
    keywords: [running shoes, trail shoes, marathon training]
    locations: [2840]
    languages: [en]
    depth: 20
    track_domains: [runnersworld.com]
`;

/** What a night leaves for BI: the marts built, their tests passed, and the state tables. */
async function marts(dir: string) {
  return withWarehouse(dir, async (db) => {
    const [r] = await db.all<{ rows: number; checks: number }>(
      `SELECT count(*)::INT AS rows, count(DISTINCT check_date)::INT AS checks FROM rank_history`,
    );
    const [s] = await db.all<{ rows: number }>(`SELECT count(*)::INT AS rows FROM spend_daily`);
    return { rankRows: r!.rows, rankChecks: r!.checks, spendRows: s!.rows };
  });
}

describe('pipeline schedule runs the same sequence as pipeline run', () => {
  let sandbox: SandboxHandle;
  let scheduled: { dir: string; cleanup: () => Promise<void> };
  let ran: { dir: string; cleanup: () => Promise<void> };
  let file: string;
  let direct: RunOutcome;
  const now = movingClock('2026-11-20T03:00:00Z');

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 11, now, readyAfterMs: 50 });
    scheduled = await tempDir('sched-seq-');
    ran = await tempDir('run-seq-');
    await mkdir(join(scheduled.dir, 'pipelines'), { recursive: true });
    file = join(scheduled.dir, 'pipelines', 'nightly.yaml');
    await writeFile(file, PIPELINE);
    direct = await runPipeline({
      pipeline: await loadPipeline(file),
      file,
      warehouseDir: join(ran.dir, 'warehouse'),
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 50,
      now,
    });
  });

  afterAll(async () => {
    await sandbox.close();
    await scheduled.cleanup();
    await ran.cleanup();
  });

  it('a scheduled tick leaves rank_history built and its tests passed, as pipeline run does', async () => {
    const warehouseDir = join(scheduled.dir, 'warehouse');
    const journal = new ScheduleJournal(join(warehouseDir, 'schedule', 'events.ndjson'));
    const scheduler = new Scheduler({
      pipelines: [{ name: 'nightly', file, schedule: '* * * * *', timezone: 'UTC' }],
      now,
      journal,
      log: silentLogger,
      run: nightRunner({
        warehouseDir,
        log: silentLogger,
        target: async () => ({ baseUrl: sandbox.url, apiKey: KEY, pollIntervalMs: 50 }),
        extra: { now },
      }),
    });
    await scheduler.tick(now());
    await scheduler.idle();
    const events = await journal.events();
    expect(events.map((e) => e.event)).toEqual(['started', 'finished']);
    expect(events[1]!.detail).toBe('completed');

    // pipeline run built and tested the models; the scheduled night did exactly the same.
    expect(direct.state).toBe('completed');
    expect(direct.models).toMatchObject({ failed: 0, ok: true });
    expect(direct.models!.tests).toBeGreaterThan(0);
    const a = await marts(join(ran.dir, 'warehouse'));
    const b = await marts(warehouseDir);
    expect(a.rankRows).toBeGreaterThan(0);
    expect(b).toEqual(a);
    const tests = await testWarehouseModels({ warehouseDir });
    expect(tests.length).toBe(direct.models!.tests);
    expect(tests.filter((t) => t.status !== 'passed' && t.status !== 'skipped')).toEqual([]);
    expect(tests.some((t) => t.model === 'rank_history' && t.status === 'passed')).toBe(true);
    // And the night published the marts for BI: rank_history's Parquet holds every row of the mart.
    const published = await withWarehouse(warehouseDir, (db) =>
      db.all<{ n: number }>(
        `SELECT count(*)::INT AS n FROM read_parquet('${join(warehouseDir, 'parquet', 'rank_history').replaceAll("'", "''")}/*/*.parquet')`,
      ),
    );
    expect(published).toEqual([{ n: b.rankRows }]);
  });

  it('after a kill, finishes the night left unfinished without buying a new one, and then has nothing to finish', async () => {
    const warehouseDir = join(scheduled.dir, 'warehouse-killed');
    // Stopped at once: the night's run exists, unfinished, with nothing bought yet.
    const stopped = new AbortController();
    stopped.abort();
    const first = await runPipeline({
      pipeline: await loadPipeline(file),
      file,
      warehouseDir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 50,
      now,
      signal: stopped.signal,
    });
    expect(first.state).toBe('partial');
    const run = nightRunner({
      warehouseDir,
      log: silentLogger,
      target: async () => ({ baseUrl: sandbox.url, apiKey: KEY, pollIntervalMs: 50 }),
      extra: { now },
    });
    const posts = () => sandbox.log.filter((l) => l.method === 'POST' && l.path.endsWith('/task_post')).length;
    const before = posts();
    const finished = await run({ name: 'nightly', file, schedule: '* * * * *', timezone: 'UTC' }, new AbortController().signal, {
      finishOnly: true,
    });
    expect(finished).toEqual({ runId: first.runId, state: 'completed', exitCode: 0 });
    expect(posts()).toBe(before + 1);
    const again = await run({ name: 'nightly', file, schedule: '* * * * *', timezone: 'UTC' }, new AbortController().signal, {
      finishOnly: true,
    });
    expect(again.state).toMatch(/^nothing to finish/);
    expect(posts()).toBe(before + 1);
    const runs = await withWarehouse(warehouseDir, (db) => db.all<{ n: number }>(`SELECT count(*)::INT AS n FROM runs`));
    expect(runs).toEqual([{ n: 1 }]);
  });
});
