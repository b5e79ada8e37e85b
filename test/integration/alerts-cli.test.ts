import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { Receiver } from './alerts-helpers.js';
import { tempDir } from './helpers.js';

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/pipeline.mjs', ...args],
      { timeout: 120_000, env: { ...process.env, ...env } },
      (err, stdout, stderr) => {
        const code = err ? (err as { code?: number }).code : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

const yaml = (rules: string) => `name: cli-shop
jobs:
  - kind: serp
    keywords: [trail shoes]
    locations: [2840]
alerts:
  webhook: "\${ALERTS_WEBHOOK}"
  secret_env: ALERTS_SECRET
  rules:
${rules}`;

describe('pipeline alerts test FILE', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let receiver: Receiver;
  beforeAll(async () => {
    tmp = await tempDir('pipeline-alerts-cli-');
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await tmp?.cleanup();
  });

  it("sends one signed sample to the file's webhook", async () => {
    const file = join(tmp.dir, 'ok.yaml');
    await writeFile(file, yaml('    - rank_drop: 3\n'));
    const r = await cli(['alerts', 'test', file], { ALERTS_WEBHOOK: `${receiver.url}/sample`, ALERTS_SECRET: 'cli-secret' });
    expect(r.stderr).toBe('');
    expect(r).toMatchObject({ code: 0, stdout: 'sample alert delivered (HTTP 200), signed with ALERTS_SECRET\n' });
    expect(receiver.received).toHaveLength(1);
    const [got] = receiver.received;
    expect(got!.path).toBe('/sample');
    expect(got!.headers['x-pipeline-signature']).toBe(`sha256=${createHmac('sha256', 'cli-secret').update(got!.raw).digest('hex')}`);
    expect(got!.body.text).toContain('Test message from `pipeline alerts test`');
    expect(got!.body.alerts).toHaveLength(1);
  });

  it('refuses a bad alerts block with file, line and field before sending anything', async () => {
    const file = join(tmp.dir, 'bad.yaml');
    await writeFile(file, yaml('    - rank_drop: 3\n    - lost_it: true\n'));
    const r = await cli(['alerts', 'test', file], { ALERTS_WEBHOOK: 'file:///etc/passwd' });
    expect(r.code).toBe(ExitCode.configInvalid);
    expect(r.stderr).toContain(`${file}:7:12  alerts.webhook: an absolute http(s) URL`);
    expect(r.stderr).toContain(`${file}:8:15  alerts.secret_env: environment variable ALERTS_SECRET is not set`);
    expect(r.stderr).toContain(`${file}:11:7  alerts.rules[1].lost_it: unknown rule 'lost_it'`);
    expect(receiver.received).toHaveLength(1);
  });
});
