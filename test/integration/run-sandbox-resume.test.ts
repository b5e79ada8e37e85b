import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withWarehouse } from '../../src/warehouse/index.js';
import { PROJECT_ROOT, pipelineRun, tempDir } from './helpers.js';

// Issue 43, finding 4: with no SVC_API_KEY, `pipeline run` starts the emulator in its own
// process. Stopped (Ctrl-C) or killed after posting, the next run resumes: the emulator must
// still know the tasks posted before, as the service would, so they are collected, not lost
// (40401) or bought again.

const CLI = join(PROJECT_ROOT, 'bin/pipeline.mjs');
const KEYWORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

/** The environment of a run on the built-in emulator: no key, results ready `readyAfter` seconds after posting. */
function builtinEnv(readyAfter: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PIPELINE_SANDBOX_READY_AFTER: readyAfter };
  for (const k of ['SVC_API_KEY', 'SVC_BASE_URL', 'SVC_SANDBOX_URL', 'PIPELINE_SANDBOX_DATE', 'PIPELINE_LAKE']) delete env[k];
  return env;
}

/**
 * Starts `pipeline run ARGS` in a child, sends `signal` once its stderr says the batch was
 * posted, and resolves with how it ended and what it wrote.
 */
export function stopAfterPosting(
  args: string[],
  env: NodeJS.ProcessEnv,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'run', ...args], { env, cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (c: Buffer) => (stdout += String(c)));
    child.stderr.on('data', (c: Buffer) => {
      stderr += String(c);
      if (!sent && stderr.includes('posted batch 1/1')) {
        sent = true;
        child.kill(signal);
      }
    });
    child.on('error', reject);
    child.on('exit', (code, sig) => resolve({ code, signal: sig, stdout, stderr }));
  });
}

interface JournalLine {
  k: string;
  t?: { id: string; fn: string };
  c?: { fn: string; method: string };
}

describe('pipeline run on the built-in emulator, stopped after posting and run again', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let file: string;
  const wh = () => join(tmp.dir, 'wh');
  // Polls every 0.1 s while results are not ready: at time scale 60 the client's rate-limit minute is 1 s,
  // so the polls never wait out a whole real minute of the SERP family's 60 calls.
  const args = () => [file, '--warehouse', wh(), '--no-models', '--poll-interval', '0.1', '--time-scale', '60'];

  beforeEach(async () => {
    tmp = await tempDir('pipeline-sandbox-resume-');
    file = join(tmp.dir, 'nightly.yaml');
    await writeFile(
      file,
      `name: nightly\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${KEYWORDS.join(', ')}]\n`,
    );
  });
  afterEach(async () => {
    await tmp.cleanup();
  });

  /** The emulator's journal under the warehouse folder: tasks it created, and the task_post calls it answered. */
  const journal = async () => {
    const dir = join(wh(), 'sandbox');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.ndjson'));
    expect(files).toEqual(['emulator-seed1.ndjson']);
    const lines = (await readFile(join(dir, files[0]!), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as JournalLine);
    return {
      tasks: new Set(lines.filter((l) => l.k === 'task' && l.t?.fn === 'task_post').map((l) => l.t!.id)),
      posts: lines.filter((l) => l.k === 'call' && l.c?.fn === 'task_post').length,
    };
  };
  const taskStates = () =>
    withWarehouse(wh(), (db) =>
      db.all<{ state: string; n: number }>(`SELECT state, count(*)::INT AS n FROM tasks GROUP BY state ORDER BY state`),
    );

  for (const signal of ['SIGINT', 'SIGKILL'] as const) {
    it(`${signal} after the POST: the next run collects every task posted before, buys none again, exits 0`, async () => {
      // Results take 4 s: the first run is stopped (at its first line after the POST) while they are not ready yet.
      const first = await stopAfterPosting(args(), builtinEnv('4'), signal);
      if (signal === 'SIGINT')
        expect(first.code, first.stderr).toBe(3); // partial, resumable
      else expect(first.signal).toBe('SIGKILL');

      const second = await pipelineRun([...args(), '--json'], builtinEnv('0.3'));
      expect(second.code, second.stderr).toBe(0);
      const outcome = JSON.parse(second.stdout) as { state: string; resumed?: boolean; tasks: { collected: number; failed: number } };
      expect(outcome.state).toBe('completed');
      expect(outcome.resumed).toBe(true);
      expect(outcome.tasks).toMatchObject({ collected: KEYWORDS.length, failed: 0 });
      expect(second.stderr).toMatch(/5 task\(s\) of earlier runs known/);
      expect(await taskStates()).toEqual([{ state: 'collected', n: KEYWORDS.length }]);
      // Bought once: one task_post answered by the emulator, five tasks created, in the run's ledger once.
      const j = await journal();
      expect(j.posts).toBe(1);
      expect(j.tasks.size).toBe(KEYWORDS.length);
      const ledgerPosts = await withWarehouse(wh(), (db) =>
        db.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ledger WHERE method = 'POST' AND path LIKE '%/task_post'`),
      );
      expect(ledgerPosts).toEqual([{ n: 1 }]);
    }, 90_000);
  }

  it('tasks the emulator does not know (its journal removed) are not hidden under "completed": the run names them and exits 1', async () => {
    const first = await stopAfterPosting(args(), builtinEnv('4'), 'SIGINT');
    expect(first.code, first.stderr).toBe(3);
    // What the fix prevents, made by hand: an emulator that forgot the tasks (as any service might: another key, too old).
    const { rm } = await import('node:fs/promises');
    await rm(join(wh(), 'sandbox'), { recursive: true });

    const second = await pipelineRun(args(), builtinEnv('0.3'));
    expect(second.code, second.stderr).toBe(1);
    expect(second.stdout).not.toMatch(/ completed /);
    expect(second.stdout).toMatch(/ partial /);
    expect(second.stdout).toMatch(/5 task\(s\) posted by this run are unknown to the service \(40401 Task Not Found\)/);
    expect(second.stdout).toMatch(/\(alpha\)/);
    expect(second.stdout).toMatch(/--new-run/);
    // Running again does not make them "completed" either.
    const third = await pipelineRun(args(), builtinEnv('0.3'));
    expect(third.code, third.stderr).toBe(1);
    expect(third.stdout).toMatch(/40401 Task Not Found/);
  }, 90_000);
});
