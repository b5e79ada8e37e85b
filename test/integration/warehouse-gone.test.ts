import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { PROJECT_ROOT, pipelineRun, tempDir } from './helpers.js';

// Issue 43, finding 6: `warehouse.duckdb` deleted (or replaced) while a run writes to it. DuckDB
// keeps writing to the file it opened, which has no name any more: the run must not end
// "completed" with exit 0 while its ledger, tasks and runs vanish with the process.

const CLI = join(PROJECT_ROOT, 'bin/pipeline.mjs');
const KEYWORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];

function builtinEnv(readyAfter: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PIPELINE_SANDBOX_READY_AFTER: readyAfter };
  for (const k of ['SVC_API_KEY', 'SVC_BASE_URL', 'SVC_SANDBOX_URL', 'PIPELINE_SANDBOX_DATE', 'PIPELINE_LAKE']) delete env[k];
  return env;
}

/** Runs `pipeline run ARGS` in a child; once its batch is posted (results not ready yet), `act` runs; resolves at the child's end. */
function actAfterPosting(
  args: string[],
  env: NodeJS.ProcessEnv,
  act: () => Promise<void>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'run', ...args], { env, cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let acted: Promise<void> | undefined;
    child.stdout.on('data', (c: Buffer) => (stdout += String(c)));
    child.stderr.on('data', (c: Buffer) => {
      stderr += String(c);
      if (!acted && stderr.includes('posted batch 1/1')) acted = act();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!acted) return reject(new Error(`the run never posted: ${stderr}`));
      acted.then(() => resolve({ code, stdout, stderr }), reject);
    });
  });
}

describe('warehouse.duckdb deleted or replaced during a run', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let file: string;
  const wh = () => join(tmp.dir, 'wh');
  const db = () => join(wh(), 'warehouse.duckdb');
  // Polls every 0.1 s while results are not ready: at time scale 60 the client's rate-limit minute is 1 s,
  // so the polls never wait out a whole real minute of the SERP family's 60 calls.
  const args = () => [file, '--warehouse', wh(), '--no-models', '--poll-interval', '0.1', '--time-scale', '60'];
  const rescued = async () => (await readdir(wh())).filter((f) => /^warehouse\.rescued-.*\.duckdb$/.test(f));

  beforeEach(async () => {
    tmp = await tempDir('pipeline-wh-gone-');
    file = join(tmp.dir, 'nightly.yaml');
    await writeFile(
      file,
      `name: nightly\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${KEYWORDS.join(', ')}]\n`,
    );
  });
  afterEach(async () => {
    await tmp.cleanup();
  });

  it('deleted: the run fails with exit 8 saying so; what the open file held is in a rescue file, and the run resumes from it buying nothing again', async () => {
    const run = await actAfterPosting(args(), builtinEnv('6'), () => rm(db()));
    expect(run.code, run.stderr).toBe(ExitCode.warehouseGone);
    expect(run.stdout).not.toMatch(/completed/);
    expect(run.stderr).toMatch(/error \[ETL_WAREHOUSE_GONE\]: .*warehouse\.duckdb was deleted while this process had it open/);
    const saved = await rescued();
    expect(saved).toHaveLength(1);
    expect(run.stderr).toContain(`copied to ${join(wh(), saved[0]!)}`);
    expect(run.stderr).toMatch(/rename warehouse\.rescued-\S+ to warehouse\.duckdb, and run again/);

    // The rescue holds the run and its five posted tasks: put back, the run resumes and collects them.
    await rename(join(wh(), saved[0]!), db());
    const again = await pipelineRun([...args(), '--json'], builtinEnv('0.3'));
    expect(again.code, again.stderr).toBe(0);
    const outcome = JSON.parse(again.stdout) as { state: string; resumed?: boolean; tasks: { collected: number; failed: number } };
    expect(outcome).toMatchObject({ state: 'completed', resumed: true, tasks: { collected: KEYWORDS.length, failed: 0 } });
    const posts = await withWarehouse(wh(), (w) =>
      w.all<{ n: number }>(`SELECT count(*)::INT AS n FROM ledger WHERE method = 'POST' AND path LIKE '%/task_post'`),
    );
    expect(posts).toEqual([{ n: 1 }]);
  }, 90_000);

  it('replaced by rename: the run fails with exit 8 saying so, and leaves the file put in its place alone', async () => {
    // A copy of the warehouse as it was at the POST, renamed onto its name (a restore from backup).
    let put: Buffer | undefined;
    const run = await actAfterPosting(args(), builtinEnv('6'), async () => {
      const other = join(tmp.dir, 'backup.duckdb');
      await copyFile(db(), other);
      put = await readFile(other);
      await rename(other, db());
    });
    expect(run.code, run.stderr).toBe(ExitCode.warehouseGone);
    expect(run.stdout).not.toMatch(/completed/);
    expect(run.stderr).toMatch(/error \[ETL_WAREHOUSE_GONE\]: .*warehouse\.duckdb was replaced by another file/);
    expect(await rescued()).toHaveLength(1);
    expect((await readFile(db())).equals(put!)).toBe(true);
    // No write-ahead log of the old file is left for DuckDB to replay onto the one put in its place.
    expect(existsSync(`${db()}.wal`)).toBe(false);
  }, 90_000);
});
