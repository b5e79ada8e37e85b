import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { tempDir } from './helpers.js';

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `pipeline` command in a child process. */
function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Out> {
  const base = { ...process.env };
  delete base.SVC_API_KEY;
  delete base.SVC_BASE_URL;
  delete base.SVC_SANDBOX_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { env: { ...base, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

describe('pipeline CLI', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let sandbox: SandboxHandle;

  beforeAll(async () => {
    tmp = await tempDir('pipeline-cli-');
    sandbox = await startSandbox({ keys: ['svc_live_testrightkey1', 'svc_sandbox_rightkey1'], readyAfterMs: 50 });
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('refuses a bad pipeline file with file, line, field and rule, and makes no call', async () => {
    const file = join(tmp.dir, 'bad.yaml');
    await writeFile(
      file,
      [
        'name: bad',
        'jobs:',
        '  - kind: serp',
        '    engines: [engZ]',
        '    depth: 701',
        '    locations: []',
        '    keywords:',
        `      - ${'k'.repeat(701)}`,
        '',
      ].join('\n'),
    );
    const out = await cli(['run', file, '--warehouse', join(tmp.dir, 'wh-bad')], {
      SVC_API_KEY: 'svc_live_testrightkey1',
      SVC_BASE_URL: sandbox.url,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`${file}:4:15  jobs[0].engines[0]: unknown engine 'engZ'`);
    expect(out.stderr).toContain(`${file}:5:12  jobs[0].depth: at most 700`);
    expect(out.stderr).toContain(`${file}:6:16  jobs[0].locations: at least one location`);
    expect(out.stderr).toContain(`${file}:8:9  jobs[0].keywords[0]: at most 700 characters`);
    expect(out.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(sandbox.log).toHaveLength(0);
  });

  it('reports a YAML syntax error with its line and makes no call', async () => {
    const file = join(tmp.dir, 'syntax.yaml');
    await writeFile(file, 'name: x\njobs:\n  - kind: serp\n    keywords: [a, b\n');
    const out = await cli(['run', file, '--warehouse', join(tmp.dir, 'wh-syntax')], {
      SVC_API_KEY: 'svc_live_testrightkey1',
      SVC_BASE_URL: sandbox.url,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+:\\d+  \\(file\\): YAML syntax`));
    expect(sandbox.log).toHaveLength(0);
  });

  it('explains a refused key without a stack trace or the key itself', async () => {
    const out = await cli(['run', 'pipelines/keywords.yaml', '--warehouse', join(tmp.dir, 'wh-key')], {
      SVC_API_KEY: 'svc_live_testwrongkey1',
      SVC_BASE_URL: sandbox.url,
    });
    expect(out.code).toBe(6);
    expect(out.stderr).toContain('refused the API key (HTTP 401)');
    expect(out.stderr).not.toContain('wrongkey1');
    expect(out.stdout).not.toContain('wrongkey1');
    expect(out.stderr).not.toMatch(/\n\s+at /);
    expect(sandbox.log.filter((l) => l.status === 401)).toHaveLength(1);
  });

  it('with --json, prints a failure as JSON on stdout too: a refused pipeline with its issues, a refused key, a usage error', async () => {
    const file = join(tmp.dir, 'bad-json.yaml');
    await writeFile(file, 'name: bad\njobs:\n  - kind: serp\n    depth: 701\n    locations: [2840]\n    keywords: [a]\n');
    const bad = await cli(['run', file, '--json', '--warehouse', join(tmp.dir, 'wh-bad-json')], {
      SVC_API_KEY: 'svc_live_testrightkey1',
      SVC_BASE_URL: sandbox.url,
    });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toEqual({
      error: {
        code: 'ETL_CONFIG_INVALID',
        message: expect.stringContaining('jobs[0].depth: at most 700'),
        exitCode: 2,
        issues: [{ file, line: 4, column: 12, field: 'jobs[0].depth', rule: 'at most 700' }],
      },
    });
    const key = await cli(['run', 'pipelines/keywords.yaml', '--json', '--warehouse', join(tmp.dir, 'wh-key-json')], {
      SVC_API_KEY: 'svc_live_testwrongkey2',
      SVC_BASE_URL: sandbox.url,
    });
    expect(key.code).toBe(6);
    expect(JSON.parse(key.stdout).error).toMatchObject({ code: 'ETL_AUTH', exitCode: 6 });
    expect(key.stdout).not.toContain('wrongkey2');
    const usage = await cli(['status', '--json', '--limit', 'many']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout).error).toMatchObject({
      code: 'ETL_CONFIG_INVALID',
      exitCode: 2,
      message: expect.stringContaining('--limit "many": takes a whole number at least 1'),
    });
    const unknown = await cli(['status', '--json', '--bogus-option']);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout).error).toMatchObject({
      code: 'ETL_USAGE',
      exitCode: 2,
      message: expect.stringContaining('bogus-option'),
    });
    // An option of one value given twice is a usage error, not a crash; a list option repeats.
    const twice = await cli(['status', '--json', '--warehouse', join(tmp.dir, 'a'), '--warehouse', join(tmp.dir, 'b')]);
    expect(twice.code).toBe(2);
    expect(JSON.parse(twice.stdout).error).toMatchObject({
      code: 'ETL_USAGE',
      exitCode: 2,
      message: `--warehouse was given 2 times (${join(tmp.dir, 'a')}, ${join(tmp.dir, 'b')}): give it once`,
    });
    const list = await cli(['report', '--json', '--pipeline', 'a', '--pipeline', 'b', '--warehouse', join(tmp.dir, 'none')]);
    expect(JSON.parse(list.stdout).error).toMatchObject({ code: 'ETL_CONFIG_INVALID' });
  });

  it('runs the README command against the built-in sandbox and prints a JSON summary', async () => {
    const out = await cli(['run', 'pipelines/keywords.yaml', '--json', '--warehouse', join(tmp.dir, 'wh-ok')]);
    expect(out.code).toBe(0);
    const line = out.stderr.split('\n').filter((l) => l.includes('built-in sandbox emulator'));
    expect(line).toHaveLength(1);
    expect(line[0]).toMatch(/http:\/\/127\.0\.0\.1:\d+/);
    const summary = JSON.parse(out.stdout);
    // 19 distinct keywords x 2 locations of SERP tasks, and one search-volume task per location
    expect(summary).toMatchObject({ pipeline: 'keywords', state: 'completed', tasks: { planned: 40, collected: 40, failed: 0 } });
    expect(summary.rowsLoaded.serp_items).toBeGreaterThan(38 * 100);
    expect(Number(summary.chargedCny)).toBe(0); // sandbox keys are never charged
  });

  it("runs the README's queries, as written, on the serving catalog and the Parquet of that run", async () => {
    const wh = join(tmp.dir, 'wh-ok'); // the sandbox run above
    // A second run the same day (an ad-hoc run beside the nightly one): spend_daily has a row per run.
    expect((await cli(['run', 'pipelines/keywords.yaml', '--json', '--warehouse', wh])).code).toBe(0);
    const readme = await readFile('README.md', 'utf8');
    const block = /\*\*Two queries\.\*\*[\s\S]*?```sql\n([\s\S]*?)```/.exec(readme)?.[1];
    const queries = (block ?? '')
      .split(/;\s*\n/)
      .map((q) => q.replace(/^--.*$/gm, '').trim())
      .filter(Boolean);
    expect(queries).toHaveLength(2);
    const parquet = /`(SELECT count\(\*\) FROM read_parquet\('warehouse\/[^`]*);`/.exec(readme)?.[1];
    expect(parquet).toBeDefined();
    const db = await DuckDBInstance.create(join(wh, 'serving.duckdb'), { access_mode: 'READ_ONLY' });
    try {
      const c = await db.connect();
      await c.run(`SET file_search_path = '${wh}'`);
      const [ranks, spend] = await Promise.all(queries.map(async (q) => (await c.runAndReadAll(q)).getRowObjectsJS()));
      expect(Array.isArray(ranks)).toBe(true);
      // One row per day, pipeline and endpoint, whatever the runs of the day.
      const keys = spend!.map((r) => `${String(r.call_date)}|${String(r.pipeline)}|${String(r.endpoint_id)}`);
      expect(keys.length).toBeGreaterThan(0);
      expect(new Set(keys).size).toBe(keys.length);
      const counted = (await c.runAndReadAll(parquet!.replace("'warehouse/", `'${wh}/`))).getRows()[0]![0];
      const items = (await c.runAndReadAll('SELECT count(*) FROM serp_items')).getRows()[0]![0];
      expect(Number(counted)).toBeGreaterThan(0);
      expect(counted).toBe(items);
      c.closeSync();
    } finally {
      db.closeSync();
    }
  });

  it('export refuses a table name it does not publish (exit 2, naming the tables) instead of rewriting nothing; a known one is rewritten', async () => {
    const wh = join(tmp.dir, 'wh-ok'); // the sandbox run above
    const bad = await cli(['export', '--warehouse', wh, '--table', 'serp_items', '--table', 'nosuch']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("no published table named 'nosuch'");
    expect(bad.stderr).toMatch(/the published tables are .*serp_items/);
    const ok = await cli(['export', '--warehouse', wh, '--table', 'serp_items', '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual([expect.objectContaining({ table: 'serp_items', rows: expect.any(Number) })]);
  });

  it('models cluster publishes the clusters and the spend it charged, so the serving catalog agrees with the ledger', async () => {
    const wh = join(tmp.dir, 'wh-ok'); // the sandbox run above
    const out = await cli(['models', 'cluster', '--warehouse', wh], { SVC_API_KEY: 'svc_live_testrightkey1', SVC_BASE_URL: sandbox.url });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('spend_daily rebuilt');
    expect(out.stdout).toMatch(/published [1-9]\d* files .*serving\.duckdb is publish \d+/);
    const db = await DuckDBInstance.create(join(wh, 'serving.duckdb'), { access_mode: 'READ_ONLY' });
    try {
      const c = await db.connect();
      await c.run(`SET file_search_path = '${wh}'`);
      const r = await c.runAndReadAll(
        `SELECT (SELECT count(*) FROM keyword_clusters)::INT AS clustered, (SELECT sum(charge_cny)::VARCHAR FROM ledger) AS ledger,
                (SELECT sum(charge_cny)::VARCHAR FROM spend_daily) AS spend`,
      );
      const row = r.getRowObjectsJS()[0] as { clustered: number; ledger: string; spend: string };
      c.closeSync();
      expect(row.clustered).toBeGreaterThan(0);
      expect(Number(row.ledger)).toBeGreaterThan(0); // the embedding and label calls were charged
      expect(row.spend).toBe(row.ledger);
    } finally {
      db.closeSync();
    }
  });

  it('documents commands, environment and exit codes in --help, and the environment and exit codes in run --help', async () => {
    const out = await cli(['--help']);
    expect(out.code).toBe(0);
    for (const s of [
      'run <file>',
      'sandbox',
      'SVC_API_KEY',
      'SVC_BASE_URL',
      'Exit codes',
      '4 stopped at the budget or balance',
      '130 a second Ctrl-C',
    ]) {
      expect(out.stdout).toContain(s);
    }
    const run = await cli(['run', '--help']);
    expect(run.code).toBe(0);
    for (const s of [
      '--collect-timeout',
      'SVC_API_KEY',
      'PIPELINE_LAKE',
      'Exit codes',
      'models failed to build or test',
      '130 a second Ctrl-C',
    ]) {
      expect(run.stdout).toContain(s);
    }
    const reconcile = await cli(['reconcile', '--help']);
    expect(reconcile.code).toBe(0);
    expect(reconcile.stdout).toMatch(/Exit codes:\n\s+0 the ledger and the account agree\s+1 they differ/);
    const doctor = await cli(['doctor', '--help']);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/Exit codes:\n\s+0 no check failed.*\s+1 some check failed/);
  });

  it('--time-scale scales the wait between polls as it scales the rate limits', async () => {
    // Results ready 20 s of the emulator's time after posting, one real second at 20x: the
    // first poll finds none, and the next comes 30 s / 20 later, not 30 s.
    const fast = await startSandbox({ keys: ['svc_live_testscaledkey1'], timeScale: 20, readyAfterMs: 20_000 });
    try {
      const t0 = Date.now();
      const out = await cli(
        ['run', 'pipelines/keywords.yaml', '--json', '--no-models', '--time-scale', '20', '--warehouse', join(tmp.dir, 'wh-scaled')],
        {
          SVC_API_KEY: 'svc_live_testscaledkey1',
          SVC_BASE_URL: fast.url,
        },
      );
      expect(out.code).toBe(0);
      expect(JSON.parse(out.stdout)).toMatchObject({ state: 'completed', tasks: { collected: 40 } });
      expect(fast.log.filter((l) => l.path.endsWith('/tasks_ready')).length).toBeGreaterThan(1); // it did poll again
      expect(Date.now() - t0).toBeLessThan(25_000);
    } finally {
      await fast.close();
    }
  });

  it('prints the package version with --version, and exits 0', async () => {
    const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    const out = await cli(['--version']);
    expect(out).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('rejects an unknown command with a usage hint and exit code 2', async () => {
    const out = await cli(['rnu']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('pipeline --help');
  });

  it('lists the next run times of scheduled pipelines, and refuses a folder with an invalid file', async () => {
    const dir = join(tmp.dir, 'sched');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(dir);
    const job = 'jobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a]\n';
    await writeFile(join(dir, 'a.yaml'), `name: weekly\nschedule: "0 3 * * 1"\ntimezone: America/New_York\n${job}`);
    await writeFile(join(dir, 'b.yaml'), `name: adhoc\n${job}`);
    const out = await cli(['schedule', dir, '--list', '--count', '2']);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("weekly  '0 3 * * 1' America/New_York");
    expect(out.stdout).not.toContain('adhoc');
    const times = out.stdout
      .split('\n')
      .filter((l) => l.startsWith('  '))
      .map((l) => l.trim().split('  ')[1]);
    expect(times).toHaveLength(2);
    for (const t of times) expect(t).toMatch(/^\d{4}-\d{2}-\d{2} 03:00 America\/New_York$/);
    await writeFile(join(dir, 'c.yaml'), `name: broken\nschedule: "99 * * * *"\n${job}`);
    const bad = await cli(['schedule', dir, '--list']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/c\.yaml:2:\d+  schedule: a cron expression/);
  });
});
