import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { readLiveRun } from '../../src/run/live-status.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, tempDir } from './helpers.js';

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { env: { ...process.env, ...env }, timeout: 90_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const YAML = 'name: twice\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a, b, c]\n';

describe('two runs of one pipeline started together', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    // Results are ready after 2 s: the first run holds the warehouse that long, and the second waits.
    sandbox = await startSandbox({ readyAfterMs: 2000 });
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
      pollIntervalMs: 50,
      limits: { windowMs: 200 },
    });
    // The first holds the warehouse once it says where it stands.
    for (let i = 0; i < 200 && !readLiveRun(wh)?.runId; i++) await new Promise((r) => setTimeout(r, 25));
    expect(readLiveRun(wh)?.runId).toBeTruthy();
    const second = cli(['run', file, '--warehouse', wh, '--json', '--poll-interval', '0.05'], {
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
    const third = await cli(['run', file, '--warehouse', wh, '--json', '--poll-interval', '0.05'], {
      SVC_API_KEY: 'svc_live_testconcurrent',
      SVC_BASE_URL: sandbox.url,
    });
    expect(third.code).toBe(0);
    expect((JSON.parse(third.stdout) as { completedWhileWaiting?: string }).completedWhileWaiting).toBeUndefined();
    expect(sandbox.log.filter((l) => l.method === 'POST' && l.path.endsWith('/task_post'))).toHaveLength(2);
  }, 120_000);
});
