import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fetch } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clockFrom, parseSandboxDate } from '../../src/sandbox/index.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { tempDir } from './helpers.js';

// The emulator started at a given date: `pipeline sandbox --date`, and PIPELINE_SANDBOX_DATE for
// the built-in sandbox of a run. Its clock starts there and runs forward, so nights run with
// successive dates get that day's data (result dates, ranks).

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGTERM');
});

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { ...process.env };
  for (const k of ['SVC_API_KEY', 'SVC_BASE_URL', 'SVC_SANDBOX_URL', 'PIPELINE_SANDBOX_DATE']) delete base[k];
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/pipeline.mjs', ...args], { env: { ...base, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

describe('the emulator started at a given date', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => (tmp = await tempDir('sandbox-date-')));
  afterAll(async () => tmp.cleanup());

  it('reads a day or an instant, refuses anything else, and runs forward from it', () => {
    expect(parseSandboxDate('2026-01-01').toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(parseSandboxDate('2026-03-04T05:06:07+01:00').toISOString()).toBe('2026-03-04T04:06:07.000Z');
    for (const bad of ['2026-02-30', '01/01/2026', 'tomorrow', '2026-01-01T00:00'])
      expect(() => parseSandboxDate(bad)).toThrow(/YYYY-MM-DD/);
    let real = 1_000_000;
    const now = clockFrom(parseSandboxDate('2026-01-01'), () => real);
    expect(now().toISOString()).toBe('2026-01-01T00:00:00.000Z');
    real += 90_000;
    expect(now().toISOString()).toBe('2026-01-01T00:01:30.000Z');
  });

  it('`pipeline sandbox --date` serves that day: a live SERP is dated 2026-01-01', async () => {
    const child = spawn(
      process.execPath,
      [
        'bin/pipeline.mjs',
        'sandbox',
        '--port',
        '0',
        '--date',
        '2026-01-01',
        '--sandbox-key',
        'svc_sandbox_dated1',
        '--live-key',
        'svc_live_testdated1',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
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
    expect(err).toContain('clock: starts at 2026-01-01T00:00:00');
    const r = await fetch(`${url}/v3/serp/engA/organic/live/advanced`, {
      method: 'POST',
      headers: { Authorization: 'Bearer svc_sandbox_dated1', 'Content-Type': 'application/json' },
      body: JSON.stringify([{ keyword: 'trail running shoes', location_code: 2840, language_code: 'en' }]),
    });
    const body = (await r.json()) as { tasks: { result: { datetime: string }[] }[] };
    expect(r.status).toBe(200);
    expect(body.tasks[0]!.result[0]!.datetime.slice(0, 10)).toBe('2026-01-01');
  });

  it('refuses a bad --date before listening', async () => {
    const out = await cli(['sandbox', '--port', '0', '--date', '2026-13-01']);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/sandbox date '2026-13-01' is not a date/);
  });

  it('two nights of `pipeline run` on the built-in sandbox with PIPELINE_SANDBOX_DATE land two check dates with moved ranks', async () => {
    const file = join(tmp.dir, 'nightly.yaml');
    await writeFile(
      file,
      [
        'name: nightly',
        'jobs:',
        '  - kind: serp',
        '    depth: 20',
        '    locations: [2840]',
        '    keywords: [trail running shoes, hiking boots, trekking poles]',
        '',
      ].join('\n'),
    );
    const wh = join(tmp.dir, 'wh');
    for (const date of ['2026-01-01', '2026-01-02']) {
      const out = await cli(['run', file, '--warehouse', wh, '--json', '--no-models', '--new-run'], { PIPELINE_SANDBOX_DATE: date });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stderr).toContain(`its clock starting at ${date}T00:00:00`);
    }
    const w = await Warehouse.open(wh);
    try {
      const days = await w.all<{ d: string; n: number }>(
        `SELECT check_date::VARCHAR AS d, count(*)::INT AS n FROM serp_results GROUP BY 1 ORDER BY 1`,
      );
      expect(days).toEqual([
        { d: '2026-01-01', n: 3 },
        { d: '2026-01-02', n: 3 },
      ]);
      // Ranks move a little from day to day: the two nights are not copies of each other.
      const [moved] = await w.all<{ n: number }>(`
        SELECT count(*)::INT AS n FROM (
          SELECT keyword, domain, rank_group FROM serp_items i JOIN serp_results r USING (task_id) WHERE r.check_date = DATE '2026-01-01' AND i.type = 'organic'
          EXCEPT
          SELECT keyword, domain, rank_group FROM serp_items i JOIN serp_results r USING (task_id) WHERE r.check_date = DATE '2026-01-02' AND i.type = 'organic')`);
      expect(moved!.n).toBeGreaterThan(0);
    } finally {
      w.close();
    }
  });
});
