import { existsSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline, type RunSummary } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, sumDecimals, tempDir } from './helpers.js';

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const yaml = (name: string, keywords: string[]) =>
  parsePipeline(
    `name: ${name}\njobs:\n  - kind: serp\n    depth: 20\n    locations: [2840]\n    keywords: [${keywords.join(', ')}]\n`,
    `${name}.yaml`,
    {},
  );

describe('status and ledger commands over a real warehouse', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let wh: string;
  const summaries: RunSummary[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-ops-');
    wh = join(tmp.dir, 'wh');
    for (const [name, kws] of [
      ['alpha', ['a', 'b', 'c']],
      ['beta', ['d', 'e']],
    ] as const) {
      summaries.push(
        await runPipeline({
          pipeline: yaml(name, [...kws]),
          file: `${name}.yaml`,
          warehouseDir: wh,
          baseUrl: sandbox.url,
          apiKey: 'svc_live_testopstest',
          logger: silentLogger,
          pollIntervalMs: 10,
        }),
      );
    }
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('status --json lists each run with its figures, newest first', async () => {
    const out = await cli(['status', '--warehouse', wh, '--json']);
    expect(out.code).toBe(0);
    const runs = JSON.parse(out.stdout);
    expect(runs.map((r: { pipeline: string }) => r.pipeline)).toEqual(['beta', 'alpha']);
    expect(runs[1]).toMatchObject({
      runId: summaries[0]!.runId,
      state: 'completed',
      tasks: { planned: 3, posted: 3, collected: 3, failed: 0 },
    });
    expect(runs[1].chargedCny).toBe(summaries[0]!.chargedCny);
    expect(runs[1].rowsLoaded).toBe(summaries[0]!.rowsLoaded.serp_results + summaries[0]!.rowsLoaded.serp_items);
  });

  it('status prints one run for people, and fails clearly for an unknown run', async () => {
    const one = await cli(['status', '--warehouse', wh, '--run', summaries[1]!.runId]);
    expect(one.stdout).toContain(`${summaries[1]!.runId}  beta  completed`);
    expect(one.stdout).toContain('2 collected');
    // The run's row ends with its ingest (its loads committed); the models and the publish come after.
    expect(one.stdout).toMatch(/started \S+Z {2}ingest \d+\.\d s\n/);
    const missing = await cli(['status', '--warehouse', wh, '--run', 'nope']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no run nope');
  });

  it('ledger --by pipeline sums exactly what the emulator charged, in every format', async () => {
    const charged = sumDecimals(sandbox.log.map((l) => l.chargeCny));
    expect(Number(charged)).toBeGreaterThan(0);
    const json = JSON.parse((await cli(['ledger', '--warehouse', wh, '--by', 'pipeline', '--format', 'json'])).stdout);
    expect(json.map((r: { pipeline: string }) => r.pipeline)).toEqual(['alpha', 'beta']);
    expect(sumDecimals(json.map((r: { charge_cny: string }) => r.charge_cny))).toBe(charged);
    expect(json.reduce((a: number, r: { calls: number }) => a + r.calls, 0)).toBe(sandbox.log.length);

    const csv = (await cli(['ledger', '--warehouse', wh, '--by', 'pipeline', '--format', 'csv'])).stdout.trim().split('\n');
    expect(csv[0]).toBe('pipeline,calls,calls_without_charge,tasks,charge_cny,refund_cny');
    expect(csv.slice(1).map((l) => l.split(',')[4])).toEqual(json.map((r: { charge_cny: string }) => r.charge_cny));

    const table = (await cli(['ledger', '--warehouse', wh, '--by', 'pipeline'])).stdout;
    expect(table).toMatch(/alpha\s+\d+\s+0\s+3\s+\d+\.\d{6}/);

    const file = join(tmp.dir, 'ledger.parquet');
    expect((await cli(['ledger', '--warehouse', wh, '--format', 'parquet', '--out', file])).code).toBe(0);
    const byDay = join(tmp.dir, 'ledger-days.parquet');
    expect((await cli(['ledger', '--warehouse', wh, '--by', 'day', '--format', 'parquet', '--out', byDay])).code).toBe(0);
    await withWarehouse(wh, async (db) => {
      // Money and times in their own types, as finance's tools read them: sum() works with no cast.
      const [r] = await db.all<{ n: number; s: string }>(
        `SELECT count(*)::INT AS n, sum(charge_cny)::VARCHAR AS s FROM read_parquet('${file}')`,
      );
      expect(r).toEqual({ n: sandbox.log.length, s: charged });
      const types = await db.all<{ c: string; t: string }>(
        `SELECT column_name AS c, column_type AS t FROM (DESCRIBE SELECT * FROM read_parquet('${file}'))`,
      );
      expect(Object.fromEntries(types.map((x) => [x.c, x.t]))).toMatchObject({
        called_at: 'TIMESTAMP WITH TIME ZONE',
        charge_cny: 'DECIMAL(18,6)',
        cost_usd: 'DECIMAL(18,6)',
        balance_cny: 'DECIMAL(18,6)',
        refund_cny: 'DECIMAL(18,6)',
      });
      const days = await db.all<{ c: string; t: string }>(
        `SELECT column_name AS c, column_type AS t FROM (DESCRIBE SELECT * FROM read_parquet('${byDay}'))`,
      );
      expect(Object.fromEntries(days.map((x) => [x.c, x.t]))).toMatchObject({ day: 'DATE', charge_cny: 'DECIMAL(18,6)' });
      const [d] = await db.all<{ s: string }>(`SELECT sum(charge_cny)::VARCHAR AS s FROM read_parquet('${byDay}')`);
      expect(d!.s).toBe(charged);
    });
  });

  it('ledger filters by day and refuses a malformed day', async () => {
    const future = JSON.parse((await cli(['ledger', '--warehouse', wh, '--from', '2999-01-01', '--format', 'json'])).stdout);
    expect(future).toEqual([]);
    const bad = await cli(['ledger', '--warehouse', wh, '--from', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--from must be a calendar day written yyyy-mm-dd, like 2026-11-21; got 'yesterday'");
    // The right shape but no such day: refused the same way, not a SQL conversion error.
    const month13 = await cli(['ledger', '--warehouse', wh, '--to', '2026-13-45']);
    expect(month13.code).toBe(2);
    expect(month13.stderr).toContain("--to must be a calendar day written yyyy-mm-dd, like 2026-11-21; got '2026-13-45'");
    expect(month13.stderr).not.toMatch(/Conversion Error|unexpected error/);
    // A range backwards holds no day: refused, not an empty ledger that reads as "nothing spent".
    const backwards = await cli(['ledger', '--warehouse', wh, '--from', '2026-11-28', '--to', '2026-11-27']);
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toContain('--from 2026-11-28 is after --to 2026-11-27');
    expect(backwards.stdout).toBe('');
  });

  it('schema --warehouse says when the data added no column, and needs a warehouse', async () => {
    const out = await cli(['schema', '--warehouse', wh]);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(''); // SERP tables only: every column declared
    expect(out.stderr).toContain('no table or column was added from the data');
    const none = await cli(['schema', '--warehouse', join(tmp.dir, 'nowhere')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no warehouse at');
    expect(existsSync(join(tmp.dir, 'nowhere'))).toBe(false);
  });

  it('says there is no warehouse rather than creating one', async () => {
    const out = await cli(['status', '--warehouse', join(tmp.dir, 'none')]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('no warehouse at');
  });
});

describe('pipeline run exit codes a script can act on', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    sandbox = await startSandbox({ readyAfterMs: 3_600_000 });
    tmp = await tempDir('pipeline-exit-');
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  const file = async (name: string, body: string) => {
    const { writeFile } = await import('node:fs/promises');
    const f = join(tmp.dir, `${name}.yaml`);
    await writeFile(f, `name: ${name}\n${body}jobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [a, b]\n`);
    return f;
  };
  const run = (f: string, env: Record<string, string>, extra: string[] = []) =>
    new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        ['bin/pipeline.mjs', 'run', f, '--warehouse', join(tmp.dir, 'wh'), '--no-models', '--json', ...extra],
        { env: { ...process.env, ...env }, timeout: 60_000 },
        (err, stdout) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout }),
      );
    });

  it('3 when results are not ready in time (resumable), 4 at the budget, 5 when the service is unreachable', async () => {
    const live = { SVC_API_KEY: 'svc_live_testexitcodes', SVC_BASE_URL: sandbox.url };
    const partial = await run(await file('slow', ''), live, ['--collect-timeout', '0']);
    expect(partial.code).toBe(3);
    expect(JSON.parse(partial.stdout)).toMatchObject({ state: 'partial', tasks: { posted: 2, pending: 2 } });

    // The ledger now prices this pipeline's tasks, so a budget below one batch posts nothing.
    const { writeFile } = await import('node:fs/promises');
    const slow = join(tmp.dir, 'slow.yaml');
    await writeFile(slow, (await import('node:fs')).readFileSync(slow, 'utf8').replace('name: slow\n', 'name: slow\nbudget_cny: 0.001\n'));
    const budget = await run(slow, live, ['--collect-timeout', '0', '--new-run']);
    expect(budget.code).toBe(4);
    expect(JSON.parse(budget.stdout).stopKind).toBe('budget');

    const dead = await run(await file('dead', ''), { SVC_API_KEY: 'svc_live_testexitcodes', SVC_BASE_URL: 'http://127.0.0.1:9' });
    expect(dead.code).toBe(5);
  });
});
