import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildIsCurrent, sourceStamp, STAMP_FILE } from '../../../bin/source-stamp.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);

/** A project in small under .tmp/ (node_modules, tsx among them, found above it): bin/ as it is, a src/ and a dist/ that say who they are. */
async function project(dir: string): Promise<void> {
  await mkdir(join(dir, 'bin'), { recursive: true });
  await mkdir(join(dir, 'src', 'cli'), { recursive: true });
  await mkdir(join(dir, 'dist'), { recursive: true });
  for (const f of ['pipeline.mjs', 'source-stamp.mjs']) await copyFile(join(root, 'bin', f), join(dir, 'bin', f));
  await writeFile(join(dir, 'src', 'bin.ts'), "const from: string = 'source';\nprocess.stdout.write(from);\n");
  await writeFile(join(dir, 'src', 'cli', 'x.ts'), 'export const x = 1;\n');
  await writeFile(join(dir, 'dist', 'bin.js'), "process.stdout.write('dist');\n");
}

/** What the small project's `bin/pipeline.mjs` ran: `dist` or `source`. */
async function ran(dir: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const e = { ...process.env, ...env };
  if (!('PIPELINE_FROM_SOURCE' in env)) delete e.PIPELINE_FROM_SOURCE;
  return (await run(process.execPath, [join(dir, 'bin', 'pipeline.mjs')], { env: e })).stdout;
}

const stamp = (dir: string) => writeFile(join(dir, 'dist', STAMP_FILE), sourceStamp(join(dir, 'src')));

describe('bin/pipeline.mjs: the build while it is of the sources as they are, else the sources', () => {
  let dir: string;
  beforeEach(async () => {
    await mkdir(join(root, '.tmp'), { recursive: true });
    dir = await mkdtemp(join(root, '.tmp', 'startup-'));
    await project(dir);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('runs dist/ when its stamp matches src/, and the sources through tsx when there is no stamp', async () => {
    expect(await ran(dir)).toBe('source');
    await stamp(dir);
    expect(buildIsCurrent(join(dir, 'src'), join(dir, 'dist'))).toBe(true);
    expect(await ran(dir)).toBe('dist');
    expect(await ran(dir, { PIPELINE_FROM_SOURCE: '1' })).toBe('source');
  });

  it('runs the sources once a file is edited, added or removed after the build', async () => {
    await stamp(dir);
    const later = new Date(Date.now() + 5_000);
    await utimes(join(dir, 'src', 'cli', 'x.ts'), later, later);
    expect(await ran(dir)).toBe('source');

    await stamp(dir);
    await writeFile(join(dir, 'src', 'cli', 'y.ts'), 'export const y = 2;\n');
    expect(await ran(dir)).toBe('source');

    await stamp(dir);
    await rm(join(dir, 'src', 'cli', 'y.ts'));
    expect(await ran(dir)).toBe('source');
  });

  it('runs dist/ of a copy that has no src/ at all, and the sources when dist/ has no stamp', async () => {
    await stamp(dir);
    await rm(join(dir, 'src'), { recursive: true });
    expect(await ran(dir)).toBe('dist');
    await rm(join(dir, 'dist', STAMP_FILE));
    await expect(ran(dir)).rejects.toThrow(/src\/bin\.ts|Cannot find module/);
  });

  it('notices an edit that keeps the size', async () => {
    await stamp(dir);
    const before = sourceStamp(join(dir, 'src'));
    // Same size, new time: a new stamp.
    await writeFile(join(dir, 'src', 'cli', 'x.ts'), 'export const x = 2;\n');
    expect(sourceStamp(join(dir, 'src'))).not.toBe(before);
    expect(await ran(dir)).toBe('source');
  });
});

describe('the build (npm run build; the global setup made it for these tests)', () => {
  it('is of the sources as they are, with the files its modules read beside them', () => {
    expect(buildIsCurrent(join(root, 'src'), join(root, 'dist'))).toBe(true);
    for (const f of ['bin.js', 'cli/build-cli.js', 'report/page/report.js', 'report/page/report.css'])
      expect(existsSync(join(root, 'dist', f)), f).toBe(true);
  });
});

describe('start-up loads no heavy module: the real command, and the doors start-up commands import', () => {
  let hooks: string;
  beforeEach(async () => {
    await mkdir(join(root, '.tmp'), { recursive: true });
    hooks = await mkdtemp(join(root, '.tmp', 'startup-hooks-'));
    // Every module the command resolves, said on stderr.
    await writeFile(
      join(hooks, 'hooks.mjs'),
      'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(`LOADED ${r.url}\\n`); return r; }\n',
    );
    await writeFile(
      join(hooks, 'register.mjs'),
      `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}/hooks.mjs`)});\n`,
    );
  });
  afterEach(() => rm(hooks, { recursive: true, force: true }));

  it.each(['--version', '--help', 'status --help', 'run --help', 'sandbox --help'])(
    'pipeline %s loads no DuckDB, Arrow, AWS SDK, undici, zod or pino',
    async (line: string) => {
      const args = line.split(' ');
      const r = await run(process.execPath, ['--import', join(hooks, 'register.mjs'), join(root, 'bin', 'pipeline.mjs'), ...args], {
        cwd: root,
      });
      const loaded = r.stderr.split('\n').filter((l) => l.startsWith('LOADED '));
      expect(loaded.length).toBeGreaterThan(5);
      const heavy = loaded.filter((l) => /node_modules\/(@duckdb|apache-arrow|@aws-sdk|undici|zod|pino)\//.test(l));
      expect(heavy).toEqual([]);
      expect(r.stdout.length).toBeGreaterThan(0);
    },
  );

  // `pipeline ledger`, `status` and `schedule --status` answer within a second on a year's
  // warehouse (issue 45; bench/startup.ts prints the figures): the stage doors they import load
  // their light modules at once and the heavy ones (a run's stages, the client, doctor, probe and
  // reconcile, Apache Arrow) only when a function that needs them is called.
  /** The modules (paths from the repository root) that importing `files` loads, through tsx as the sources run. */
  async function loadedBy(...files: string[]): Promise<string[]> {
    const code = files.map((f) => `await import(${JSON.stringify(pathToFileURL(join(root, f)).href)});`).join('\n');
    const r = await run(
      process.execPath,
      ['--import', 'tsx/esm', '--import', join(hooks, 'register.mjs'), '--input-type=module', '-e', code],
      {
        cwd: root,
      },
    );
    return [...r.stderr.matchAll(/^LOADED (file:\S+)$/gm)].map((m) => relative(root, fileURLToPath(m[1]!)));
  }
  const heavyOf = (mods: string[]) =>
    mods.filter(
      (m) =>
        /^node_modules\/(apache-arrow|undici)\//.test(m) ||
        /^src\/(client|collect|post|models|lake|report|sandbox)\//.test(m) ||
        /^src\/ops\/(doctor|probe|reconcile)\.ts$/.test(m) ||
        /^src\/run\/(run-pipeline|ingest-step|preflight|cluster-run|publish-step)\.ts$/.test(m),
    );

  it('the doors of ops, run and warehouse (ledger, status) load none of their heavy modules', async () => {
    const mods = await loadedBy('src/ops/index.ts', 'src/run/index.ts', 'src/warehouse/index.ts');
    expect(mods).toContain('src/ops/ledger-report.ts');
    expect(mods).toContain('src/warehouse/warehouse.ts');
    expect(heavyOf(mods)).toEqual([]);
  });

  it('the door of schedule (schedule --status) loads no run, client or Arrow', async () => {
    const mods = await loadedBy('src/schedule/index.ts');
    expect(mods).toContain('src/schedule/schedule-status.ts');
    expect(heavyOf(mods)).toEqual([]);
  });

  it('the listing sees a heavy module when one is loaded (so the two checks above can fail)', async () => {
    const mods = await loadedBy('src/warehouse/index.ts', 'src/warehouse/arrow-read.ts');
    expect(heavyOf(mods).some((m) => m.startsWith('node_modules/apache-arrow/'))).toBe(true);
  });
});
