import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * test/conformance/ is a black-box suite written from the spec text (issue 44): it reaches the
 * emulator only over HTTP, so it imports nothing from src/, not even types. This test reads
 * every module specifier under test/conformance/ (static, type-only, side-effect, re-export,
 * dynamic import and require) and fails on any that reaches src/.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));

const SPECIFIERS = [
  /\b(?:import|export)\s+(?:type\s+)?[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, // import x from, import type, export * from
  /\bimport\s*['"]([^'"]+)['"]/g, // side-effect import
  /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g, // dynamic import
  /\brequire\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g, // require
  /\/\/\/\s*<reference\s+path\s*=\s*['"]([^'"]+)['"]/g, // triple-slash reference
];

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await files(p)));
    else if (/\.(c|m)?(t|j)sx?$/.test(entry.name)) out.push(p);
  }
  return out;
}

/** Every `file: specifier` under `<base>/test/conformance` that reaches `<base>/src`. */
async function importsIntoSrc(base: string): Promise<string[]> {
  const src = resolve(base, 'src');
  const bad: string[] = [];
  for (const file of await files(join(base, 'test', 'conformance'))) {
    const text = await readFile(file, 'utf8');
    for (const re of SPECIFIERS) {
      for (const m of text.matchAll(re)) {
        const spec = m[1]!;
        const target = spec.startsWith('.') || spec.startsWith('/') ? resolve(dirname(file), spec) : resolve(base, 'node_modules', spec);
        const bare = !spec.startsWith('.') && !spec.startsWith('/');
        if (target === src || target.startsWith(src + sep) || (bare && /^(src|pipeline)(\/|$)/.test(spec))) {
          bad.push(`${relative(base, file)}: ${spec}`);
        }
      }
    }
  }
  return bad;
}

describe('test/conformance imports nothing from src/ (black box, issue 44)', () => {
  it('the suite as it is: no import reaches src/', async () => {
    expect((await files(join(root, 'test', 'conformance'))).length).toBeGreaterThan(3);
    expect(await importsIntoSrc(root)).toEqual([]);
  });

  describe('fails when someone adds such an import', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'conformance-imports-'));
      await mkdir(join(dir, 'src', 'catalog'), { recursive: true });
      await mkdir(join(dir, 'test', 'conformance', 'deep'), { recursive: true });
      await writeFile(join(dir, 'src', 'catalog', 'index.ts'), 'export type Entry = { path: string };\nexport const ENDPOINTS = [];\n');
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));

    it('each form of import is caught: value, type-only, side-effect, re-export, dynamic, require, package self-name', async () => {
      const lines = [
        "import { ENDPOINTS } from '../../src/catalog/index.js';",
        "import type { Entry } from '../../src/catalog/index.js';",
        "import '../../src/catalog/index.js';",
        "export * from '../../src/catalog/index.js';",
        "const m = await import('../../src/catalog/index.js');",
        "const r = require('../../src/catalog/index.js');",
        "import { x } from 'src/catalog/index.js';",
      ];
      for (const [i, line] of lines.entries()) await writeFile(join(dir, 'test', 'conformance', `bad${i}.ts`), `${line}\n`);
      await writeFile(
        join(dir, 'test', 'conformance', 'deep', 'nested.ts'),
        "import {\n  ENDPOINTS,\n} from '../../../src/catalog/index.js';\n",
      );
      const bad = await importsIntoSrc(dir);
      for (let i = 0; i < lines.length; i++)
        expect(
          bad.some((b) => b.startsWith(join('test', 'conformance', `bad${i}.ts`))),
          lines[i],
        ).toBe(true);
      expect(bad.some((b) => b.startsWith(join('test', 'conformance', 'deep', 'nested.ts')))).toBe(true);
    });

    it('lets the suite import node built-ins, packages and its own helpers', async () => {
      await writeFile(
        join(dir, 'test', 'conformance', 'ok.test.ts'),
        "import { spawn } from 'node:child_process';\nimport { describe } from 'vitest';\nimport { startEmulator } from './emulator.js';\nimport type { Json } from './emulator.js';\n",
      );
      expect(await importsIntoSrc(dir)).toEqual([]);
    });
  });
});
