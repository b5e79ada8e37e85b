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
      'src/collect/pull.ts':
        "import { call } from '../client/index.js';\nimport { w } from '../warehouse/index.js';\nexport const q = call + w;\n",
      'src/run/run.ts': "import { q } from '../collect/pull.js';\nexport const r = q;\n",
    });
    const r = await check(dir);
    expect(r.out).toContain('no dependency violations');
    expect(r.code).toBe(0);
  }, 60_000);
});
