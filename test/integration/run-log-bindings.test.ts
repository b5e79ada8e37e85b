import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nightRunner } from '../../src/schedule/night-runner.js';
import { ScheduleJournal } from '../../src/schedule/schedule-journal.js';
import { Scheduler } from '../../src/schedule/scheduler.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { movingClock, tempDir } from './helpers.js';

const KEY = 'svc_live_testlogbindings1';
const PIPELINE = `name: nightly
schedule: "* * * * *"
timezone: UTC
jobs:
  - name: ranks
    kind: serp
    keywords: [running shoes, trail shoes]
    locations: [2840]
    languages: [en]
    depth: 20
    track_domains: [runnersworld.com]
`;

describe('every log line of a scheduled run carries its pipeline and run id', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  const now = movingClock('2026-11-20T03:00:00Z');

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 5, now, readyAfterMs: 50 });
    tmp = await tempDir('log-bindings-');
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('step done lines and every line after the run id is known have both; the key is in none', async () => {
    await mkdir(join(tmp.dir, 'pipelines'));
    const file = join(tmp.dir, 'pipelines', 'nightly.yaml');
    await writeFile(file, PIPELINE);
    const raw: string[] = [];
    const sink = new Writable({ write: (c, _e, cb) => (raw.push(String(c)), cb()) });
    const log = pino({ level: 'debug' }, sink);
    const warehouseDir = join(tmp.dir, 'warehouse');
    const scheduler = new Scheduler({
      pipelines: [{ name: 'nightly', file, schedule: '* * * * *', timezone: 'UTC' }],
      now,
      journal: new ScheduleJournal(join(warehouseDir, 'schedule', 'events.ndjson')),
      log,
      run: nightRunner({
        warehouseDir,
        log,
        target: async () => ({ baseUrl: sandbox.url, apiKey: KEY, pollIntervalMs: 50 }),
        extra: { now },
      }),
    });
    await scheduler.tick(now());
    await scheduler.idle();
    const lines = raw.map((l) => JSON.parse(l) as { msg: string; pipeline?: string; runId?: string; step?: string });
    const first = lines.findIndex((l) => l.runId);
    expect(first).toBeGreaterThanOrEqual(0);
    const runId = lines[first]!.runId!;
    const after = lines.slice(first);
    expect(after.filter((l) => l.pipeline !== 'nightly' || l.runId !== runId)).toEqual([]);
    const steps = after.filter((l) => l.msg === 'step done').map((l) => l.step);
    expect(steps).toEqual(expect.arrayContaining(['ingest', 'models', 'publish']));
    expect(raw.join('')).not.toContain(KEY);
  });

  it('the same through the real CLI: `pipeline run --log-level debug` with LOG_FORMAT=json', async () => {
    const file = join(tmp.dir, 'cli.yaml');
    await writeFile(file, PIPELINE.replace('name: nightly', 'name: by-hand'));
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_FORMAT: 'json', SVC_API_KEY: KEY, SVC_BASE_URL: sandbox.url };
    delete env.SVC_SANDBOX_URL;
    const stderr = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        // A live key on SVC_BASE_URL polls every 30 s by default: the emulator has the tasks ready at once.
        ['bin/pipeline.mjs', 'run', file, '--warehouse', join(tmp.dir, 'wh-cli'), '--log-level', 'debug', '--poll-interval', '0.05'],
        { env, timeout: 120_000 },
        (err, _out, errText) => (err ? reject(new Error(`${err.message}\n${errText}`)) : resolve(errText)),
      ),
    );
    const lines = stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; pipeline?: string; runId?: string; step?: string });
    const first = lines.findIndex((l) => l.runId);
    expect(first).toBeGreaterThanOrEqual(0);
    const after = lines.slice(first);
    expect(after.filter((l) => l.pipeline !== 'by-hand' || l.runId !== lines[first]!.runId)).toEqual([]);
    expect(after.filter((l) => l.msg === 'step done').length).toBeGreaterThanOrEqual(3);
    expect(stderr).not.toContain(KEY);
  });
});
