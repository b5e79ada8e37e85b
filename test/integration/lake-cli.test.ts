import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/ops/doctor.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { tempDir } from './helpers.js';
import { deadPort, listKeys, startS3, writeLayout, type LocalS3 } from './lake-helpers.js';

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && k !== 'PIPELINE_LAKE'));
    execFile(
      process.execPath,
      ['bin/pipeline.mjs', ...args],
      // No AWS_* of the test's own: the SDK's warning about Node versions must be silenced by the tool (stderr stays empty).
      { timeout: 60_000, env: { ...clean, ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('pipeline lake and pipeline doctor with a lake (s3rver on loopback)', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let s3: LocalS3;
  let sandbox: SandboxHandle;
  let wh: string;

  beforeAll(async () => {
    tmp = await tempDir('pipeline-lake-cli-');
    s3 = await startS3(join(tmp.dir, 's3'));
    sandbox = await startSandbox({ keys: ['svc_live_testlakedoctor'] });
    wh = join(tmp.dir, 'wh');
    await writeLayout(wh);
  });
  afterAll(async () => {
    await sandbox.close();
    await s3.close();
    await tmp.cleanup();
  });

  it('lake sync uploads the layout, a second sync sends nothing; PIPELINE_LAKE names the lake', async () => {
    const first = await cli(['lake', 'sync', '--warehouse', wh, '--json'], { ...s3.env, PIPELINE_LAKE: 's3://lake/cli' });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const out = JSON.parse(first.stdout) as { uploaded: { files: number }; committed: boolean };
    expect(out.committed).toBe(true);
    expect(out.uploaded.files).toBeGreaterThan(3);
    expect((await listKeys(s3, 'cli/')).length).toBe(out.uploaded.files + 1);

    const second = await cli(['lake', 'sync', '--warehouse', wh, '--lake', 's3://lake/cli'], s3.env);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^lake s3:\/\/lake\/cli\/: 0 uploaded \(0\.0 kB\), \d+ unchanged, 0 deleted in/);
  });

  it('lake check against nothing listening exits 5 with ETL_LAKE_UNREACHABLE and no secret', async () => {
    const port = await deadPort();
    const r = await cli(['lake', 'check', '--lake', 's3://lake/cli'], {
      ...s3.env,
      AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
      AWS_SECRET_ACCESS_KEY: 'cli-secret-123456',
    });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/^error \[ETL_LAKE_UNREACHABLE\]: no usable answer from http:\/\/127\.0\.0\.1:\d+/);
    expect(r.stderr + r.stdout).not.toContain('cli-secret-123456');
  });

  it('doctor adds a lake line when a lake is configured: ok, or fail with the fix', async () => {
    const base = { baseUrl: sandbox.url, apiKey: 'svc_live_testlakedoctor', warehouseDir: join(tmp.dir, 'doctor-wh') };
    const ok = await runDoctor({ ...base, lakeUrl: 's3://lake/doctor', env: s3.env });
    expect(ok.find((c) => c.name === 'lake')).toMatchObject({ level: 'ok', detail: expect.stringContaining('list, put and delete work') });
    const refused = await runDoctor({
      ...base,
      lakeUrl: 's3://lake/doctor',
      env: { ...s3.env, AWS_ACCESS_KEY_ID: 'AKIANOTKNOWN0000', AWS_SECRET_ACCESS_KEY: 'doctor-secret-99' },
    });
    const line = refused.find((c) => c.name === 'lake')!;
    expect(line.level).toBe('fail');
    expect(line.detail).toContain('InvalidAccessKeyId');
    expect(line.fix).toContain('AWS_SECRET_ACCESS_KEY');
    expect(JSON.stringify(refused)).not.toMatch(/AKIANOTKNOWN0000|doctor-secret-99/);
    const none = await runDoctor(base);
    expect(none.some((c) => c.name === 'lake')).toBe(false);
  });
});
