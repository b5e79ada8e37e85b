import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

const env = () => {
  const e: NodeJS.ProcessEnv = { ...process.env, LOG_FORMAT: 'json' };
  delete e.SVC_API_KEY;
  delete e.SVC_BASE_URL;
  delete e.SVC_SANDBOX_URL;
  return e;
};

/** Runs the real `pipeline` command in a child process. */
function cli(args: string[]): Promise<Out> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { env: env(), timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

const JOB = 'jobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a]\n';

describe('pipeline schedule for operators (real CLI)', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    tmp = await tempDir('sched-ops-cli-');
  });
  afterAll(() => tmp.cleanup());

  it('suggests the closest command, and the closest sub-verb, for a typo', async () => {
    const verb = await cli(['rnu']);
    expect(verb.code).toBe(2);
    expect(verb.stderr).toContain('Did you mean run?');
    const sub = await cli(['lake', 'snyc']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain('Did you mean sync?');
  });

  it('fails at start-up (exit 2) when no pipeline of the folder is valid, naming file, line and field', async () => {
    const dir = join(tmp.dir, 'only-bad');
    await mkdir(dir);
    await writeFile(join(dir, 'bad.yaml'), `name: bad\nschedule: "0 3 * * *"\ntimezone: UTC\n${JOB}    depht: 20\n`);
    const out = await cli(['schedule', dir, '--warehouse', join(tmp.dir, 'wh-bad')]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`${join(dir, 'bad.yaml')}:8:5  jobs[0].depht: unknown field 'depht' (did you mean 'depth'?)`);
  });

  it('keeps running with one invalid file beside a valid one, and `schedule --status` reads it while it runs', async () => {
    const dir = join(tmp.dir, 'mixed');
    const wh = join(tmp.dir, 'wh');
    await mkdir(dir);
    await writeFile(join(dir, 'good.yaml'), `name: good\nschedule: "0 3 * * *"\ntimezone: Europe/Paris\n${JOB}`);
    await writeFile(join(dir, 'bad.yaml'), `name: bad\nschedule: "0 3 * * *"\ntimezone: UTC\n${JOB}    depht: 20\n`);
    const child = spawn(process.execPath, ['bin/pipeline.mjs', 'schedule', dir, '--warehouse', wh], {
      env: env(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += String(c)));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      const statusFile = join(wh, 'schedule', 'status.json');
      for (let i = 0; i < 300 && !existsSync(statusFile); i++) await new Promise((r) => setTimeout(r, 100));
      const out = await cli(['schedule', '--status', '--json', '--warehouse', wh]);
      expect(out.code).toBe(0);
      const report = JSON.parse(out.stdout) as {
        alive: boolean;
        pid: number;
        pipelines: { name: string; schedule: string; nextLocal: string; last: unknown }[];
        invalid: { file: string; issues: { line: number; field: string; rule: string }[] }[];
      };
      expect(report.alive).toBe(true);
      expect(report.pid).toBe(child.pid);
      expect(report.pipelines).toMatchObject([{ name: 'good', schedule: '0 3 * * * Europe/Paris', last: null }]);
      expect(report.pipelines[0]!.nextLocal).toMatch(/^\d{4}-\d{2}-\d{2} 03:00 Europe\/Paris$/);
      expect(report.invalid).toMatchObject([{ file: join(dir, 'bad.yaml'), issues: [{ line: 8, field: 'jobs[0].depht' }] }]);
      const text = await cli(['schedule', '--status', '--warehouse', wh]);
      expect(text.stdout).toContain(`scheduler: alive  pid ${child.pid}`);
      expect(text.stdout).toContain(`INVALID ${join(dir, 'bad.yaml')} (skipped):`);
      // The log says it too, as one JSON line naming the file.
      const line = stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; file?: string })
        .find((l) => l.msg.startsWith('pipeline file invalid, skipped'));
      expect(line?.file).toBe(join(dir, 'bad.yaml'));
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const after = JSON.parse((await cli(['schedule', '--status', '--json', '--warehouse', wh])).stdout) as { alive: boolean };
    expect(after.alive).toBe(false);
  });
});
