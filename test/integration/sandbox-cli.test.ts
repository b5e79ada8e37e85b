import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { fetch } from 'undici';
import { sandboxOptionsFromArgs } from '../../src/cli/commands/sandbox.js';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGTERM');
});

/** Starts `pipeline sandbox` in a child process and waits for its address line. */
async function serve(args: string[]): Promise<{ url: string; stderr: () => string }> {
  const child = spawn(process.execPath, ['bin/pipeline.mjs', 'sandbox', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m && err.includes('Ctrl-C')) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`pipeline sandbox exited with ${code}: ${err}`)));
  });
  return { url, stderr: () => err };
}

const get = (url: string, key: string) => fetch(url, { headers: { Authorization: `Bearer ${key}` } });

describe('pipeline sandbox command', () => {
  it('accepts exactly the keys given, applies the time-scaled rate limits and serves the admin view', async () => {
    const { url } = await serve([
      '--live-key',
      'svc_live_testgiven1',
      '--sandbox-key',
      'svc_sandbox_given1',
      '--admin',
      '--time-scale',
      '60',
    ]);
    expect((await get(`${url}/v3/serp/engA/organic/tasks_ready`, 'svc_sandbox_given1')).status).toBe(200);
    expect((await get(`${url}/v3/serp/engA/organic/tasks_ready`, 'svc_live_testgiven1')).status).toBe(200);
    expect((await get(`${url}/v3/serp/engA/organic/tasks_ready`, 'svc_sandbox_local')).status).toBe(401);
    let limited: string | null = null;
    for (let i = 0; i < 11 && limited === null; i++) {
      const r = await get(`${url}/v3/appendix/status`, 'svc_sandbox_given1');
      await r.text();
      if (r.status === 429) limited = r.headers.get('retry-after');
    }
    expect(Number(limited)).toBeGreaterThan(0);
    expect(Number(limited)).toBeLessThanOrEqual(1); // a minute at 60x
    const stats = (await (await fetch(`${url}/__admin/stats`)).json()) as { calls_by_family: Record<string, number>; charged_cny: string };
    expect(stats.calls_by_family.appendix_status).toBe(11);
    expect(stats.charged_cny).toBe('0.0000');
  });

  it('makes up keys and prints them when none are given', async () => {
    const { url, stderr } = await serve([]);
    const m = /live (svc_live_\w+)\s+sandbox (svc_sandbox_\w+)/.exec(stderr());
    expect(m).not.toBeNull();
    expect((await get(`${url}/v3/appendix/user_data`, m![2]!)).status).toBe(200);
    expect((await get(`${url}/v3/appendix/user_data`, 'svc_sandbox_local')).status).toBe(401);
  });

  it('labels a key given apart from one made up, and never echoes the given one', async () => {
    const { url, stderr } = await serve(['--live-key', 'svc_live_testgiven2']);
    expect(stderr()).not.toContain('svc_live_testgiven2');
    const m = /accepted keys: live as given\s+sandbox (svc_sandbox_\w+) \(made up for this run\)/.exec(stderr());
    expect(m).not.toBeNull();
    expect((await get(`${url}/v3/appendix/user_data`, m![1]!)).status).toBe(200);
    expect((await get(`${url}/v3/appendix/user_data`, 'svc_live_testgiven2')).status).toBe(200);
  });

  it('reads the fault profile and refuses an unknown one before starting', () => {
    const base = {
      port: 0,
      host: '127.0.0.1',
      seed: 1,
      'ready-after': 2,
      balance: '1',
      'time-scale': 1,
      admin: false,
      'rate-limits': true,
    };
    const { options } = sandboxOptionsFromArgs({ ...base, faults: 'flaky,drop=0.5' });
    expect((options.faults as { drop: number }).drop).toBe(0.5);
    expect(() => sandboxOptionsFromArgs({ ...base, faults: 'stormy' })).toThrow(/none, flaky, chaos/);
    expect(() => sandboxOptionsFromArgs({ ...base, faults: 'none', 'live-key': 'nope' })).toThrow(/--live-key/);
  });
});
