import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Agent, type Dispatcher } from 'undici';
import { ServiceClient } from '../../src/client/index.js';
import type { Pipeline } from '../../src/config/index.js';
import { fromMicros, toMicros } from '../../src/post/money.js';
import { preflightJobs } from '../../src/run/preflight.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { tsChildArgs } from './ts-child.js';

/** A fresh warehouse folder per test, removed afterwards. */
export async function tempDir(prefix = 'pipeline-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const silentLogger = pino({ level: 'silent' });

/** Sums decimal strings exactly, as finance would (the tool's own money helpers). */
export function sumDecimals(values: readonly string[]): string {
  return fromMicros(values.reduce((a, v) => a + toMicros(v), 0n));
}

/** A clock on a fixed UTC day that still moves, so task lifecycles progress. */
export function movingClock(startIso: string): () => Date {
  const start = Date.parse(startIso);
  const t0 = Date.now();
  return () => new Date(start + (Date.now() - t0));
}

/** A dispatcher whose every request gives up after `ms` without an answer (a client timeout shorter than the default 60 s). */
export class ShortTimeouts extends Agent {
  constructor(private readonly ms: number) {
    super();
  }
  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return super.dispatch({ ...opts, headersTimeout: this.ms, bodyTimeout: this.ms }, handler);
  }
}

/**
 * Reads the reference lists a pipeline's preflight needs (SERP locations and languages, ...)
 * from a sandbox of its own into the warehouse's copy (`reference_lists`), as an earlier run
 * would have: a test that puts a faulty service behind a run then sees only the calls it is about.
 */
export async function warmReferenceLists(warehouseDir: string, pipeline: Pipeline, file: string, now: () => Date): Promise<void> {
  const sandbox = await startSandbox({ now });
  try {
    const client = new ServiceClient({ baseUrl: sandbox.url, apiKey: 'svc_live_testwarmlists', land: async () => {} });
    await withWarehouse(warehouseDir, (wh) => preflightJobs(client, pipeline, file, { wh, now }));
  } finally {
    await sandbox.close();
  }
}

/**
 * Runs `script` (TypeScript, in a child process: `tsChildArgs`) until its stdout holds `marker`, then kills it
 * with SIGKILL there: a crash at a known point. Rejects when the child ends on its own.
 */
export function killWhenSaid(script: string, args: string[], env: NodeJS.ProcessEnv, marker: string): Promise<{ said: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, tsChildArgs(script, args), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      said += String(c);
      if (said.includes(marker)) child.kill('SIGKILL');
    });
    child.stderr.on('data', (c: Buffer) => (err += String(c)));
    child.on('error', reject);
    child.on('exit', (_code, signal) =>
      signal === 'SIGKILL' ? resolve({ said }) : reject(new Error(`child ended without being killed: ${said} ${err}`)),
    );
  });
}

/** The project's root, where `bin/pipeline.mjs` is. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The real `pipeline run ARGS` in a child process, to its end: its exit code and output. */
export function pipelineRun(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return pipelineCli(['run', ...args], env);
}

/** The real `pipeline ARGS` in a child process, to its end: its exit code and output. */
export function pipelineCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(PROJECT_ROOT, 'bin/pipeline.mjs'), ...args],
      { env, cwd: PROJECT_ROOT, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (err as { code?: number }).code : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}
