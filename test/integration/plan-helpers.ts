// The set-up shared by plan-cli.test.ts and plan-cli-pricing.test.ts (one suite split in two so
// vitest runs the halves in parallel): one emulator and one folder with the two pipeline files for
// the whole file, and `pipeline plan` run as a child.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';

export const KEY = 'svc_live_testplantest';
export const SHALLOW = 'name: shallow\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a, b]\n';
export const YAML =
  'name: shoes\nbudget_cny: 2\njobs:\n  - kind: serp\n    depth: 100\n    locations: [2840, 2826]\n    keywords: [a, b, c, A, d]\n';

export function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Registers the file's set-up in the calling describe block: an emulator (`sandbox`, made before
 * the first test) and a folder `tmp` holding `file` (YAML) and `shallow` (SHALLOW), removed after
 * the last test. `env()` points a child at the emulator.
 */
export function planHarness() {
  const dir = mkdtempSync(join(tmpdir(), 'pipeline-plan-'));
  const h = {
    sandbox: undefined as unknown as SandboxHandle,
    tmp: { dir, cleanup: () => rm(dir, { recursive: true, force: true }) },
    file: join(dir, 'shoes.yaml'),
    shallow: join(dir, 'shallow.yaml'),
    env: () => ({ SVC_API_KEY: KEY, SVC_BASE_URL: h.sandbox.url }),
  };
  beforeAll(async () => {
    h.sandbox = await startSandbox({ readyAfterMs: 0 });
    await writeFile(h.file, YAML);
    await writeFile(h.shallow, SHALLOW);
  });
  afterAll(async () => {
    await h.sandbox?.close();
    await h.tmp.cleanup();
  });
  return h;
}
