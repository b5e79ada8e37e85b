import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');
const run = promisify(execFile);

/** Runs the project's own rule file over a small tree; returns the exit code and what it printed. */
async function check(dir: string): Promise<{ code: number; out: string }> {
  try {
    const r = await run(depcruise, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd: dir });
    return { code: 0, out: r.stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: `${e.stdout}${e.stderr}` };
  }
}

async function tree(dir: string, files: Record<string, string>): Promise<void> {
  await copyFile(join(root, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' }, include: ['src'] }),
  );
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

describe('the stage arrows of design.md are checked (.dependency-cruiser.cjs)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arrows-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('the project itself has no forbidden import', async () => {
    const r = await check(root);
    expect(r.out).toContain('no dependency violations');
    expect(r.code).toBe(0);
  }, 60_000);

  it('fails on each never-rule: warehouse → client, report → sandbox, sandbox → warehouse, sandbox → catalog, collect → run', async () => {
    await tree(dir, {
      'src/client/index.ts': 'export const call = 1;\n',
      'src/warehouse/landing.ts': "import { call } from '../client/index.js';\nexport const x = call;\n",
      'src/report/names.ts': "import { y } from '../sandbox/world.js';\nexport const n = y;\n",
      'src/sandbox/world.ts': "import { x } from '../warehouse/landing.js';\nexport const y = x;\n",
      'src/catalog/index.ts': 'export const ENDPOINTS = [];\n',
      'src/sandbox/spec/endpoints.ts': "import { ENDPOINTS } from '../../catalog/index.js';\nexport const table = ENDPOINTS;\n",
      'src/run/progress.ts': 'export const p = 1;\n',
      'src/collect/pull.ts': "import { p } from '../run/progress.js';\nexport const q = p;\n",
    });
    const r = await check(dir);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/warehouse-imports-only-catalog: src\/warehouse\/landing\.ts → src\/client\/index\.ts/);
    expect(r.out).toMatch(/report-imports-only-[a-z-]+: src\/report\/names\.ts → src\/sandbox\/world\.ts/);
    expect(r.out).toMatch(/sandbox-imports-only-itself: src\/sandbox\/world\.ts → src\/warehouse\/landing\.ts/);
    // The emulator reads the spec on its own: not even the client's catalog (design.md, "The sandbox emulator").
    expect(r.out).toMatch(/sandbox-imports-only-itself: src\/sandbox\/spec\/endpoints\.ts → src\/catalog\/index\.ts/);
    expect(r.out).toMatch(/collect-imports-only-[a-z-]+: src\/collect\/pull\.ts → src\/run\/progress\.ts/);
  }, 60_000);

  it('allows the arrows design.md draws', async () => {
    await tree(dir, {
      'src/catalog/index.ts': 'export const e = 1;\n',
      'src/client/index.ts': "import { e } from '../catalog/index.js';\nexport const call = e;\n",
      'src/warehouse/index.ts': "import { e } from '../catalog/index.js';\nexport const w = e;\n",
      'src/collect/index.ts':
        "import { call } from '../client/index.js';\nimport { w } from '../warehouse/index.js';\nexport const q = call + w;\n",
      'src/run/run.ts': "import { q } from '../collect/index.js';\nexport const r = q;\n",
    });
    const r = await check(dir);
    expect(r.out).toContain('no dependency violations');
    expect(r.code).toBe(0);
  }, 60_000);

  it('fails on a forbidden arrow of post, schedule and ops: post → run, schedule → ops, ops → run, run → schedule', async () => {
    await tree(dir, {
      'src/run/index.ts': "import { s } from '../schedule/index.js';\nexport const r = s;\n",
      'src/post/index.ts': "import { r } from '../run/index.js';\nexport const p = r;\n",
      'src/schedule/index.ts': "import { o } from '../ops/index.js';\nexport const s = o;\n",
      'src/ops/index.ts': "import { r } from '../run/index.js';\nexport const o = r;\n",
    });
    const r = await check(dir);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/post-imports-only-[a-z-]+: src\/post\/index\.ts → src\/run\/index\.ts/);
    expect(r.out).toMatch(/schedule-imports-only-[a-z-]+: src\/schedule\/index\.ts → src\/ops\/index\.ts/);
    expect(r.out).toMatch(/ops-imports-only-[a-z-]+: src\/ops\/index\.ts → src\/run\/index\.ts/);
    expect(r.out).toMatch(/run-imports-only-[a-z-]+: src\/run\/index\.ts → src\/schedule\/index\.ts/);
  }, 60_000);

  it("fails on an import past a stage's index.ts: cli → post, schedule, ops files; run → a post file", async () => {
    await tree(dir, {
      'src/post/index.ts': "export { postAll } from './post-step.js';\n",
      'src/post/post-step.ts': 'export const postAll = 1;\nexport const stopFor = 2;\n',
      'src/post/budget.ts': 'export const budgetStop = 3;\n',
      'src/schedule/index.ts': "export { Scheduler } from './scheduler.js';\n",
      'src/schedule/scheduler.ts': 'export const Scheduler = 1;\n',
      'src/ops/index.ts': "export { reconcile } from './reconcile.js';\n",
      'src/ops/reconcile.ts': 'export const reconcile = 1;\n',
      'src/run/ingest.ts': "import { budgetStop } from '../post/budget.js';\nexport const i = budgetStop;\n",
      'src/cli/commands.ts':
        "import { stopFor } from '../post/post-step.js';\nimport { Scheduler } from '../schedule/scheduler.js';\nimport { reconcile } from '../ops/reconcile.js';\nexport const c = stopFor + Scheduler + reconcile;\n",
    });
    const r = await check(dir);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/post-imported-through-its-index: src\/cli\/commands\.ts → src\/post\/post-step\.ts/);
    expect(r.out).toMatch(/schedule-imported-through-its-index: src\/cli\/commands\.ts → src\/schedule\/scheduler\.ts/);
    expect(r.out).toMatch(/ops-imported-through-its-index: src\/cli\/commands\.ts → src\/ops\/reconcile\.ts/);
    expect(r.out).toMatch(/post-imported-through-its-index: src\/run\/ingest\.ts → src\/post\/budget\.ts/);
    // A stage's own files import each other freely.
    expect(r.out).not.toMatch(/src\/post\/index\.ts → src\/post\/post-step\.ts/);
  }, 60_000);

  it('allows the arrows of post, schedule and ops, each through its index.ts', async () => {
    await tree(dir, {
      'src/catalog/index.ts': 'export const e = 1;\n',
      'src/warehouse/index.ts': "import { e } from '../catalog/index.js';\nexport const w = e;\n",
      'src/post/index.ts': "export { p } from './post-step.js';\n",
      'src/post/post-step.ts': "import { w } from '../warehouse/index.js';\nexport const p = w;\n",
      'src/run/index.ts': "import { p } from '../post/index.js';\nexport const r = p;\n",
      'src/schedule/index.ts': "import { r } from '../run/index.js';\nexport const s = r;\n",
      'src/ops/index.ts': "import { p } from '../post/index.js';\nimport { w } from '../warehouse/index.js';\nexport const o = p + w;\n",
      'src/cli/commands.ts':
        "import { p } from '../post/index.js';\nimport { s } from '../schedule/index.js';\nimport { o } from '../ops/index.js';\nexport const c = p + s + o;\n",
    });
    const r = await check(dir);
    expect(r.out).toContain('no dependency violations');
    expect(r.code).toBe(0);
  }, 60_000);
});
