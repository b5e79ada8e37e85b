import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { tempDir } from './helpers.js';

const LATIN1_E_ACUTE = Buffer.from([0xe9]); // 'é' in Latin-1: not UTF-8

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Issue 16, point 11: bytes that are not UTF-8 are refused with file and line, never bought as U+FFFD. */
describe('invalid UTF-8 in a pipeline file or a keywords file', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let sandbox: SandboxHandle;
  beforeAll(async () => {
    tmp = await tempDir('pipeline-utf8-');
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('refuses a pipeline file, naming the file, line and column', async () => {
    const file = join(tmp.dir, 'bad.yaml');
    await writeFile(
      file,
      Buffer.concat([
        Buffer.from('name: bad\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [caf'),
        LATIN1_E_ACUTE,
        Buffer.from(' au lait]\n'),
      ]),
    );
    const err = await loadPipeline(file).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues).toEqual([expect.objectContaining({ file, line: 5, column: 19 })]);
    expect((err as Error).message).toContain('not valid UTF-8 at line 5, column 19');
  });

  it('refuses a keywords file with its line, and pipeline run buys nothing', async () => {
    const file = join(tmp.dir, 'kw.yaml');
    await writeFile(file, 'name: kw\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords_file: kw.txt\n');
    await writeFile(join(tmp.dir, 'kw.txt'), Buffer.concat([Buffer.from('running shoes\ncr'), LATIN1_E_ACUTE, Buffer.from('pes\n')]));
    const err = await loadPipeline(file).catch((e) => e);
    expect((err as ConfigError).issues).toEqual([
      expect.objectContaining({ file: join(tmp.dir, 'kw.txt'), line: 2, column: 3, field: 'jobs[0].keywords_file' }),
    ]);
    const out = await cli(['run', file, '--warehouse', join(tmp.dir, 'wh')], {
      SVC_API_KEY: 'svc_live_testutf8test',
      SVC_BASE_URL: sandbox.url,
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('kw.txt:2:3');
    expect(sandbox.log.filter((l) => l.method === 'POST')).toHaveLength(0);
  });

  it('still reads valid UTF-8, multi-byte characters included', async () => {
    const file = join(tmp.dir, 'ok.yaml');
    await writeFile(file, 'name: ok\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [café au lait, 東京 ラーメン]\n');
    const p = await loadPipeline(file);
    expect((p.jobs[0] as { keywords: string[] }).keywords).toEqual(['café au lait', '東京 ラーメン']);
  });
});
