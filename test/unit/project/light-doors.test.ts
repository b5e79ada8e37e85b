import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `pipeline ledger`, `status` and `schedule --status` answer within a second on a year's warehouse
 * (issue 45; bench/startup.ts prints the figures): the stage doors they import (ops, run,
 * warehouse, schedule) load the light modules at once and the heavy ones (a run's stages, the
 * client, doctor, probe and reconcile, Apache Arrow) only when a function that needs them is
 * called. Each door is imported in a child process that lists every module it loads.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  await mkdir(join(root, '.tmp'), { recursive: true });
  dir = await mkdtemp(join(root, '.tmp', 'light-doors-'));
  await writeFile(
    join(dir, 'hook.mjs'),
    'export async function load(url, ctx, next) { process.stderr.write(`@@ ${url}\\n`); return next(url, ctx); }\n',
  );
  await writeFile(join(dir, 'list.mjs'), "import { register } from 'node:module';\nregister('./hook.mjs', import.meta.url);\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The modules (paths from the repository root) that importing `files` loads, through tsx as the sources run. */
async function loaded(...files: string[]): Promise<string[]> {
  const code = files.map((f) => `await import(${JSON.stringify(pathToFileURL(join(root, f)).href)});`).join('\n');
  const { stderr } = await run(
    process.execPath,
    ['--import', 'tsx/esm', '--import', pathToFileURL(join(dir, 'list.mjs')).href, '--input-type=module', '-e', code],
    {
      cwd: root,
    },
  );
  return [...stderr.matchAll(/^@@ (file:\S+)$/gm)].map((m) => relative(root, fileURLToPath(m[1]!)).replaceAll('\\', '/'));
}

const heavy = (mods: string[]) =>
  mods.filter(
    (m) =>
      m.startsWith('node_modules/apache-arrow/') ||
      m.startsWith('node_modules/undici/') ||
      /^src\/(client|collect|post|models|lake|report|sandbox)\//.test(m) ||
      /^src\/ops\/(doctor|probe|reconcile)\.ts$/.test(m) ||
      /^src\/run\/(run-pipeline|ingest-step|preflight|cluster-run|publish-step)\.ts$/.test(m),
  );

describe('stage doors that start-up commands import load no heavy module', () => {
  it('ops, run and warehouse (ledger, status)', async () => {
    const mods = await loaded('src/ops/index.ts', 'src/run/index.ts', 'src/warehouse/index.ts');
    expect(mods).toContain('src/ops/ledger-report.ts');
    expect(mods).toContain('src/warehouse/warehouse.ts');
    expect(heavy(mods)).toEqual([]);
  }, 60_000);

  it('schedule (schedule --status)', async () => {
    const mods = await loaded('src/schedule/index.ts');
    expect(mods).toContain('src/schedule/schedule-status.ts');
    expect(heavy(mods)).toEqual([]);
  }, 60_000);

  it('the listing sees a heavy module when one is loaded (so the checks above can fail)', async () => {
    const mods = await loaded('src/warehouse/index.ts', 'src/warehouse/arrow-read.ts');
    expect(heavy(mods).some((m) => m.startsWith('node_modules/apache-arrow/'))).toBe(true);
  }, 60_000);
});
