import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { LiveStatus, readLiveRun } from '../../src/run/live-status.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { pipelineCli, silentLogger, tempDir } from './helpers.js';

const cli = (args: string[], env: Record<string, string>) => pipelineCli(args, { ...process.env, ...env });

const YAML = 'name: twice\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a, b, c]\n';

describe('two runs of one pipeline started together', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    // Results are ready after 4 s: the first run holds the warehouse that long, and the second
    // (a CLI process, seconds to start on a loaded machine) finds it held.
    sandbox = await startSandbox({ readyAfterMs: 4000 });
    tmp = await tempDir('pipeline-concurrent-');
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('the one that waited for the warehouse buys nothing: the night the other completed meanwhile is its answer', async () => {
    const file = join(tmp.dir, 'twice.yaml');
    writeFileSync(file, YAML);
    const wh = join(tmp.dir, 'wh');
    const first = runPipeline({
      pipeline: parsePipeline(YAML, file, {}),
      file,
      warehouseDir: wh,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_testconcurrent',
      logger: silentLogger,
      pollIntervalMs: 250,
      limits: { windowMs: 200 },
    });
    // The first holds the warehouse once it says where it stands.
    for (let i = 0; i < 200 && !readLiveRun(wh)?.runId; i++) await new Promise((r) => setTimeout(r, 25));
    expect(readLiveRun(wh)?.runId).toBeTruthy();
    const second = cli(['run', file, '--warehouse', wh, '--json', '--poll-interval', '0.25'], {
      SVC_API_KEY: 'svc_live_testconcurrent',
      SVC_BASE_URL: sandbox.url,
      PIPELINE_LOCK_WAIT_SECONDS: '60',
    });
    const a = await first;
    const b = await second;
    expect(a.state).toBe('completed');
    expect(b.code).toBe(0);
    expect(b.stderr).toMatch(/is held by/);
    expect(b.stderr).toContain(`run ${a.runId} of twice completed while this one waited for the warehouse: nothing was bought again`);
    const out = JSON.parse(b.stdout) as { runId: string; completedWhileWaiting?: string; chargedCny: string };
    expect(out.completedWhileWaiting).toBe(a.runId);
    expect(out.runId).toBe(a.runId);
    // One night bought: one task_post, three tasks, one run.
    const posts = sandbox.log.filter((l) => l.method === 'POST' && l.path.endsWith('/task_post'));
    expect(posts).toHaveLength(1);
    const runs = await withWarehouse(wh, (w) => w.all<{ n: number }>(`SELECT count(*)::INT AS n FROM runs`));
    expect(runs).toEqual([{ n: 1 }]);

    // Started after the first had finished, a run buys the night again, as a run by hand does.
    const third = await cli(['run', file, '--warehouse', wh, '--json', '--poll-interval', '0.25'], {
      SVC_API_KEY: 'svc_live_testconcurrent',
      SVC_BASE_URL: sandbox.url,
    });
    expect(third.code).toBe(0);
    expect((JSON.parse(third.stdout) as { completedWhileWaiting?: string }).completedWhileWaiting).toBeUndefined();
    expect(sandbox.log.filter((l) => l.method === 'POST' && l.path.endsWith('/task_post'))).toHaveLength(2);
  }, 120_000);

  it('the night of the run that held the warehouse is the answer even when that run had finished before this one was invoked (in its end steps)', async () => {
    const file = join(tmp.dir, 'twice.yaml');
    writeFileSync(file, YAML);
    const wh = join(tmp.dir, 'wh');
    const env = { SVC_API_KEY: 'svc_live_testconcurrent', SVC_BASE_URL: sandbox.url };
    const a = await runPipeline({
      pipeline: parsePipeline(YAML, file, {}),
      file,
      warehouseDir: wh,
      baseUrl: sandbox.url,
      apiKey: env.SVC_API_KEY,
      logger: silentLogger,
      pollIntervalMs: 250,
      limits: { windowMs: 200 },
    });
    expect(a.state).toBe('completed');
    // The first run is in its end steps (models, publish, checkpoint): finished in the runs
    // table, still holding the warehouse and its live file, when the second is invoked.
    const b = await withWarehouse(wh, async (w) => {
      const status = new LiveStatus(w.dir, 'twice', () => new Date());
      status.runId(a.runId);
      status.step('checkpoint');
      const child = spawn(process.execPath, ['bin/pipeline.mjs', 'run', file, '--warehouse', wh, '--json', '--poll-interval', '0.25'], {
        env: { ...process.env, ...env, PIPELINE_LOCK_WAIT_SECONDS: '60' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const held = new Promise<void>((r) =>
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          if (/is held by/.test(stderr)) r();
        }),
      );
      const code = new Promise<number>((r) => child.on('close', (c) => r(c ?? 1)));
      await Promise.race([held, code]);
      return { code, out: () => stdout, err: () => stderr, status };
    }).then(async (r) => {
      r.status.end();
      return { code: await r.code, stdout: r.out(), stderr: r.err() };
    });
    expect(b.stderr).toMatch(/is held by/);
    expect(b.code).toBe(0);
    expect(b.stderr).toContain(`run ${a.runId} of twice completed while this one waited for the warehouse: nothing was bought again`);
    expect((JSON.parse(b.stdout) as { completedWhileWaiting?: string }).completedWhileWaiting).toBe(a.runId);
    expect(sandbox.log.filter((l) => l.method === 'POST' && l.path.endsWith('/task_post'))).toHaveLength(1);
  }, 120_000);
});
