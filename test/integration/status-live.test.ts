import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { LIVE_FILE, readLiveRun, type LiveRun } from '../../src/run/live-status.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { silentLogger, tempDir } from './helpers.js';

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { env: { ...process.env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('pipeline status while a run holds the warehouse', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    // Results are never ready during the test: the run sits collecting, holding the database, until it is stopped.
    sandbox = await startSandbox({ readyAfterMs: 600_000 });
    tmp = await tempDir('pipeline-status-live-');
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('shows the run in progress from what it wrote of itself, without waiting for it, and nothing of it once it ends', async () => {
    const stop = new AbortController();
    const run = runPipeline({
      pipeline: parsePipeline('name: live\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a, b, c]\n', 'live.yaml', {}),
      file: 'live.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: 'svc_live_teststatuslive',
      logger: silentLogger,
      pollIntervalMs: 50,
      // A rate-limit "minute" of 0.2 s: the ready-list polls never wait out a real minute.
      limits: { windowMs: 200 },
      collectTimeoutMs: 60_000,
      signal: stop.signal,
    });
    let live: LiveRun | undefined;
    for (let i = 0; i < 100 && !(live?.runId && live.progress); i++) {
      await new Promise((r) => setTimeout(r, 50));
      live = readLiveRun(tmp.dir);
    }
    expect(live).toMatchObject({ pid: process.pid, pipeline: 'live', step: 'ingest' });
    const [out, text] = await Promise.all([cli(['status', '--warehouse', tmp.dir, '--json']), cli(['status', '--warehouse', tmp.dir])]);
    expect(out.code).toBe(0);
    const [shown] = JSON.parse(out.stdout) as (LiveRun & { live: boolean })[];
    expect(shown).toMatchObject({ live: true, pid: process.pid, pipeline: 'live', runId: live!.runId });
    expect(shown!.progress).toMatch(/posted 3 · ready 0 · collected 0\/3/);
    expect(text.stdout).toContain(`${live!.runId}  live  running now (PID ${process.pid})`);

    stop.abort(); // Ctrl-C: the run stops collecting, saves its state and lets go of the database
    const summary = await run;
    expect(summary.runId).toBe(live!.runId);
    expect(summary.state).toBe('partial');
    expect(existsSync(join(tmp.dir, LIVE_FILE))).toBe(false);
    const after = JSON.parse((await cli(['status', '--warehouse', tmp.dir, '--json'])).stdout) as {
      runId: string;
      state: string;
      live?: boolean;
    }[];
    expect(after).toEqual([expect.objectContaining({ runId: live!.runId, state: 'partial' })]);
    expect(after[0]!.live).toBeUndefined();
  }, 60_000);
});
