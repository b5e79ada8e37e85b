import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { Warehouse, withWarehouse } from '../../src/warehouse/index.js';
import { PROJECT_ROOT, silentLogger, tempDir } from './helpers.js';

interface Out {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The real `pipeline ARGS` in a child, on the built-in sandbox (no key). Killed with SIGKILL
 * after `killAfterMs`: the spinning mkdir of finding 7 ignored SIGTERM, which would leave the
 * child (and the test) running forever.
 */
function cli(args: string[], env: NodeJS.ProcessEnv = {}, killAfterMs = 50_000): Promise<Out> {
  const base = { ...process.env };
  delete base.SVC_API_KEY;
  delete base.SVC_BASE_URL;
  delete base.SVC_SANDBOX_URL;
  const t0 = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(PROJECT_ROOT, 'bin/pipeline.mjs'), ...args],
      { env: { ...base, ...env }, cwd: tmpCwd, timeout: killAfterMs, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        const e = err as { code?: number; signal?: string } | null;
        resolve({
          code: e ? (typeof e.code === 'number' ? e.code : null) : 0,
          signal: e?.signal ?? null,
          stdout,
          stderr,
          ms: Date.now() - t0,
        });
      },
    );
  });
}

let tmpCwd = PROJECT_ROOT;

/**
 * What every refused path must give: exit 2, one line on stderr naming the path, no stack trace,
 * and not killed by cli's timeout (the start-up of the CLI takes about 1 s on an idle machine;
 * the timeout leaves room for a loaded one, far below the forever of the bug).
 */
function expectPathRefused(out: Out, path: string): void {
  expect(out.signal, `${out.ms} ms: ${out.stderr}`).toBeNull();
  expect(out.code, out.stderr).toBe(2);
  const lines = out.stderr.trim().split('\n');
  const error = lines.filter((l) => l.startsWith('error ['));
  expect(error, out.stderr).toHaveLength(1);
  expect(error[0]).toContain(path);
  expect(out.stderr).not.toMatch(/unexpected error|\n\s+at /);
}

describe('paths the CLI cannot use: exit 2 with one line naming them (issue 43, findings 7 and 8)', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let wh: string;
  beforeAll(async () => {
    tmp = await tempDir('pipeline-paths-');
    tmpCwd = tmp.dir;
    wh = join(tmp.dir, 'wh');
    // A warehouse that is there, so the commands reach their own paths.
    await withWarehouse(wh, async () => {});
    await writeFile(join(tmp.dir, 'afile'), 'x');
    // A folder with one scheduled pipeline (schedule: in it), for `pipeline schedule`.
    await mkdir(join(tmp.dir, 'sched'));
    await copyFile(join(PROJECT_ROOT, 'pipelines/keywords.yaml'), join(tmp.dir, 'sched', 'keywords.yaml'));
  });
  afterAll(async () => {
    tmpCwd = PROJECT_ROOT;
    await tmp.cleanup();
  });

  it('finding 7: --warehouse under /proc/1 (no folder can be made there) exits 2 at once, not a 100% CPU loop', async () => {
    const file = join(PROJECT_ROOT, 'pipelines/keywords.yaml');
    const outs = await Promise.all([
      cli(['run', file, '--warehouse', '/proc/1/nope'], {}, 30_000),
      cli(['replay', '--warehouse', '/proc/1/nope'], {}, 30_000),
      // The scheduler checks its warehouse at start-up, not at the first night (it would wait for it).
      cli(['schedule', join(tmp.dir, 'sched'), '--warehouse', '/proc/1/nope'], {}, 30_000),
    ]);
    for (const out of outs) expectPathRefused(out, '/proc/1/nope');
    // A file where the warehouse folder should be: a usage error as well, not ETL_WAREHOUSE (exit 1).
    expectPathRefused(await cli(['replay', '--warehouse', join(tmp.dir, 'afile')]), 'afile');
  });

  it('finding 8: schedule, ledger --out, schema --write, models --sql and report --out name the path instead of a stack trace', async () => {
    const outs = await Promise.all([
      cli(['schedule', '/nonexistent']),
      cli(['schedule', '/etc/passwd', '--list']),
      cli(['ledger', '--format', 'csv', '--out', 'nodir/x.csv', '--warehouse', wh]),
      cli(['ledger', '--format', 'parquet', '--out', 'nodir/x.parquet', '--warehouse', wh]),
      cli(['schema', '--write', '/proc/nope.md']),
      cli(['models', 'run', '--sql', '/nonexistent', '--warehouse', wh]),
      cli(['report', '--out', join(tmp.dir, 'afile', 'r.html'), '--warehouse', wh]),
    ]);
    const paths = ['/nonexistent', '/etc/passwd', 'nodir/x.csv', 'nodir/x.parquet', '/proc/nope.md', '/nonexistent', 'afile/r.html'];
    for (const [i, out] of outs.entries()) expectPathRefused(out, paths[i]!);
    // The line says what to do.
    expect(outs[0]!.stderr).toMatch(/Pass the folder that holds the pipeline files/);
    expect(outs[2]!.stderr).toMatch(/Pass a file in a folder that is there/);
    expect(outs[4]!.stderr).toMatch(/Pass a file in a folder/);
  });
});

describe('temp files a killed process left in raw/ (issue 43)', () => {
  const DAY = 'raw/2026-11-20';
  const STALE = [`${DAY}/serp--r1-1-abcd.ndjson.gz.0a1b2c3d.tmp`, `${DAY}/calls--r1.seg-abcdef12.ndjson.gz.deadbeef.tmp`];
  /** Files that look alike but are not writeDurably's temp files, and a whole raw file: all kept. */
  const KEPT = [
    `${DAY}/serp--r1-1-abcd.ndjson.gz`,
    `${DAY}/notes.tmp`,
    `${DAY}/serp--r1-2.ndjson.gz.not-hex!.tmp`,
    'parquet/x.ndjson.gz.0a1b2c3d.tmp',
  ];

  async function seed(dir: string): Promise<void> {
    await mkdir(join(dir, DAY), { recursive: true });
    await mkdir(join(dir, 'parquet'), { recursive: true });
    for (const f of [...STALE, ...KEPT]) await writeFile(join(dir, f), 'partial');
  }

  async function rawFiles(dir: string): Promise<string[]> {
    const day = (await readdir(join(dir, DAY))).map((f) => `${DAY}/${f}`);
    const parquet = (await readdir(join(dir, 'parquet'))).filter((f) => f.endsWith('.tmp')).map((f) => `parquet/${f}`);
    return [...day, ...parquet].sort();
  }

  it('a run removes them at its start and nothing else', async () => {
    const tmp = await tempDir('pipeline-stale-');
    const sandbox = await startSandbox({ readyAfterMs: 0 });
    try {
      await withWarehouse(tmp.dir, async () => {});
      await seed(tmp.dir);
      const summary = await runPipeline({
        pipeline: parsePipeline(`name: stale\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [alpha]\n`, 'stale.yaml', {}),
        file: 'stale.yaml',
        warehouseDir: tmp.dir,
        baseUrl: sandbox.url,
        apiKey: 'svc_live_teststaletemps',
        logger: silentLogger,
        pollIntervalMs: 5,
        models: false,
      });
      expect(summary.state).toBe('completed');
      const left = await rawFiles(tmp.dir);
      for (const f of STALE) expect(left).not.toContain(f);
      for (const f of KEPT) expect(left).toContain(f);
      // raw/ was cleaned once (its day folders' times are kept beside it): a temp file a later
      // kill leaves in a day folder already seen is found at the next open all the same.
      await writeFile(join(tmp.dir, STALE[0]!), 'partial');
      await withWarehouse(tmp.dir, async () => {});
      expect(await rawFiles(tmp.dir)).toEqual(left);
    } finally {
      await sandbox.close();
      await tmp.cleanup();
    }
  });

  it('a process that cannot take the warehouse (another holds it) removes none', async () => {
    const tmp = await tempDir('pipeline-stale-held-');
    try {
      const held = await Warehouse.open(tmp.dir);
      try {
        await seed(tmp.dir);
        const out = await cli(['replay', '--warehouse', tmp.dir], { PIPELINE_LOCK_WAIT_SECONDS: '0' });
        expect(out.code, out.stderr).toBe(7);
        expect(await rawFiles(tmp.dir)).toEqual([...STALE, ...KEPT].sort());
      } finally {
        held.close();
      }
    } finally {
      await tmp.cleanup();
    }
  });
});
