import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { runPipeline } from '../../src/run/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { pipelineCli, silentLogger, sumDecimals, tempDir } from './helpers.js';

// Issue 45: finance reconciles yesterday (and a range of days, in a time zone), across several
// warehouses on one account; the ledger reads by day in a time zone, by several keys, as CSV a
// spreadsheet reads. The emulator and the runs share one clock the test moves across midnight.

const KEY = 'svc_live_testfinancedays';

/** A clock that runs from `startIso` in real time, and jumps forward when told. */
function steerableClock(startIso: string): { now: () => Date; jump: (ms: number) => void } {
  const t0 = Date.now();
  let shift = Date.parse(startIso);
  return { now: () => new Date(shift + (Date.now() - t0)), jump: (ms) => (shift += ms) };
}

const HOUR = 3_600_000;

function serp(name: string, keywords: string[]) {
  return parsePipeline(
    `name: ${name}\njobs:\n  - kind: serp\n    depth: 30\n    locations: [2840]\n    keywords: [${keywords.join(', ')}]\n`,
    `${name}.yaml`,
    {},
  );
}

describe('reconcile by day and ledger by time zone (issue 45)', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let clock: ReturnType<typeof steerableClock>;
  let env: NodeJS.ProcessEnv;

  async function night(wh: string, name: string, keywords: string[]): Promise<void> {
    await runPipeline({
      pipeline: serp(name, keywords),
      file: `${name}.yaml`,
      warehouseDir: wh,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
      now: clock.now,
      models: false, // reconcile and the ledger read the ledger: no mart
    });
  }

  /** A charge no warehouse knows: a call made on the account by another tool. */
  async function foreignCharge(): Promise<string> {
    const res = await request(`${sandbox.url}/v3/serp/engA/organic/task_post`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ keyword: 'elsewhere', location_code: 2840, language_code: 'en' }]),
    });
    await res.body.dump();
    return String(res.headers['x-svc-charge-cny']);
  }

  async function cli(args: string[]) {
    return pipelineCli(args, env);
  }

  beforeEach(async () => {
    // 23:40 UTC on 2026-11-27: 00:40 on the 28th in Berlin (UTC+1 in November).
    clock = steerableClock('2026-11-27T23:40:00Z');
    sandbox = await startSandbox({ readyAfterMs: 0, now: clock.now });
    tmp = await tempDir('pipeline-finance-');
    env = { ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: sandbox.url };
    delete env.PIPELINE_SANDBOX_DATE;
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it("reconciles yesterday's charges after midnight, and today is empty", async () => {
    const wh = join(tmp.dir, 'wh');
    await night(wh, 'late', ['a', 'b', 'c']);
    const charged = sumDecimals(sandbox.log.map((l) => l.chargeCny));
    const calls = sandbox.log.length;
    expect(Number(charged)).toBeGreaterThan(0);
    clock.jump(HOUR); // 00:40 UTC on the 28th
    const y = await cli(['reconcile', '--warehouse', wh, '--day', 'yesterday', '--json']);
    expect(y.code, y.stderr).toBe(0);
    const [day, ...more] = JSON.parse(y.stdout);
    expect(more).toEqual([]);
    expect(day).toMatchObject({ day: '2026-11-27', timezone: 'UTC', ledgerCny: charged, accountCny: null, discrepancies: [] });
    expect(day.calls).toBe(calls);
    expect(day.statisticsNote).toContain('current day only (2026-11-28)');
    const named = JSON.parse((await cli(['reconcile', '--warehouse', wh, '--day', '2026-11-27', '--json'])).stdout);
    expect(named[0].ledgerCny).toBe(charged);
    const today = JSON.parse((await cli(['reconcile', '--warehouse', wh, '--json'])).stdout);
    expect(today).toMatchObject([{ day: '2026-11-28', calls: 0, ledgerCny: '0.000000' }]);
    // A charge made after the last call, by no warehouse: on the chain from yesterday's last balance to now.
    await foreignCharge();
    const strict = await cli(['reconcile', '--warehouse', wh, '--day', 'yesterday', '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toMatch(/unexplained_debit\s+-\d+\.\d{6}/);
  });

  it('reconciles a range of days, one entry per day, and fails on the day a charge is in no ledger', async () => {
    const wh = join(tmp.dir, 'wh');
    clock.jump(-24 * HOUR); // 2026-11-26
    await night(wh, 'one', ['a', 'b']);
    const first = sumDecimals(sandbox.log.map((l) => l.chargeCny));
    clock.jump(24 * HOUR); // 2026-11-27
    await night(wh, 'two', ['c', 'd']);
    const charge = await foreignCharge();
    await night(wh, 'three', ['e']);
    const second = sumDecimals([...sandbox.log.map((l) => l.chargeCny), `-${first}`, `-${charge}`]);
    clock.jump(HOUR); // 2026-11-28
    const out = await cli(['reconcile', '--warehouse', wh, '--from', '2026-11-26', '--to', 'yesterday', '--json']);
    expect(out.code, out.stderr).toBe(0); // one warehouse alone: the foreign charge is a note
    const days = JSON.parse(out.stdout);
    expect(days.map((d: { day: string; ledgerCny: string }) => [d.day, d.ledgerCny])).toEqual([
      ['2026-11-26', first],
      ['2026-11-27', second],
    ]);
    expect(days[0].discrepancies).toEqual([]);
    expect(days[0].unaccounted).toEqual([]);
    expect(days[1].discrepancies).toEqual([]);
    expect(days[1].unaccounted.map((d: { kind: string; amountCny: string }) => [d.kind, d.amountCny])).toEqual([
      ['unexplained_debit', `-${charge}00`],
    ]);
    const strict = await cli(['reconcile', '--warehouse', wh, '--from', '2026-11-26', '--to', '2026-11-27', '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toMatch(/2026-11-26 \(UTC\)[^\n]*\n {2}[^\n]*balance chain alone\nno discrepancies\n2026-11-27/);
    const backwards = await cli(['reconcile', '--warehouse', wh, '--from', '2026-11-27', '--to', '2026-11-26']);
    expect(backwards.code).toBe(2);
  });

  it('a time zone moves a call across the day boundary, in the ledger and in reconcile', async () => {
    const wh = join(tmp.dir, 'wh');
    await night(wh, 'late', ['a', 'b']); // 23:40 UTC on the 27th, 00:40 on the 28th in Berlin
    const calls = sandbox.log.length;
    const utc = JSON.parse((await cli(['ledger', '--warehouse', wh, '--by', 'day', '--format', 'json'])).stdout);
    expect(utc.map((r: { day: string }) => r.day)).toEqual(['2026-11-27']);
    const berlin = JSON.parse(
      (await cli(['ledger', '--warehouse', wh, '--by', 'day', '--tz', 'Europe/Berlin', '--format', 'json'])).stdout,
    );
    expect(berlin.map((r: { day: string }) => r.day)).toEqual(['2026-11-28']);
    expect(berlin[0].charge_cny).toBe(utc[0].charge_cny);
    const inBerlin = await cli(['ledger', '--warehouse', wh, '--from', '2026-11-28', '--tz', 'Europe/Berlin', '--format', 'json']);
    expect(JSON.parse(inBerlin.stdout).length).toBe(calls);
    const r = await cli(['reconcile', '--warehouse', wh, '--from', '2026-11-27', '--to', '2026-11-28', '--tz', 'Europe/Berlin', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const days = JSON.parse(r.stdout);
    expect(days.map((d: { day: string; calls: number }) => [d.day, d.calls])).toEqual([
      ['2026-11-27', 0],
      ['2026-11-28', calls],
    ]);
    expect(days[1].statisticsNote).toContain('its own time zone (UTC), not Europe/Berlin');
    const bad = await cli(['ledger', '--warehouse', wh, '--tz', 'Mars/Olympus']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--tz must be an IANA time zone name, like Europe/Berlin or UTC; got 'Mars/Olympus'");
  });

  it('ledger: two --by keys, CSV with a date and readable times, and a summary by default', async () => {
    const wh = join(tmp.dir, 'wh');
    await night(wh, 'alpha', ['a', 'b']);
    await night(wh, 'beta', ['c']);
    const charged = sumDecimals(sandbox.log.map((l) => l.chargeCny));
    const two = JSON.parse((await cli(['ledger', '--warehouse', wh, '--by', 'day', '--by', 'pipeline', '--format', 'json'])).stdout);
    expect(two.map((r: { day: string; pipeline: string }) => [r.day, r.pipeline])).toEqual([
      ['2026-11-27', 'alpha'],
      ['2026-11-27', 'beta'],
    ]);
    expect(sumDecimals(two.map((r: { charge_cny: string }) => r.charge_cny))).toBe(charged);

    const csv = (await cli(['ledger', '--warehouse', wh, '--format', 'csv', '--tz', 'Europe/Berlin'])).stdout.trim().split('\n');
    const cols = csv[0]!.split(',');
    expect(cols.slice(0, 4)).toEqual(['date', 'called_at_local', 'timezone', 'called_at_utc']);
    expect(csv.length - 1).toBe(sandbox.log.length);
    for (const line of csv.slice(1)) {
      const [date, local, tz, utc] = line.split(',');
      expect(local).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(utc).toMatch(/^2026-11-27 23:\d{2}:\d{2}$/);
      expect(tz).toBe('Europe/Berlin');
      expect(date).toBe('2026-11-28');
      expect(Date.parse(`${local!.replace(' ', 'T')}Z`) - Date.parse(`${utc!.replace(' ', 'T')}Z`)).toBe(HOUR);
    }

    const summary = await cli(['ledger', '--warehouse', wh]);
    expect(summary.code, summary.stderr).toBe(0);
    const lines = summary.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^day\s+endpoint\s+calls\s+calls_without_charge\s+tasks\s+charge_cny\s+refund_cny$/);
    expect(lines.at(-1)).toMatch(new RegExp(`^total\\s+${sandbox.log.length}\\s+0\\s+\\d+\\s+${charged.replace('.', '\\.')}\\s+`));
    expect(lines.length).toBeLessThan(sandbox.log.length + 2);
    const calls = (await cli(['ledger', '--warehouse', wh, '--calls'])).stdout.trim().split('\n');
    expect(calls.length).toBe(sandbox.log.length + 2);
  });

  it('two warehouses on one account: each alone notes the other, together they reconcile clean, and a charge in neither fails', async () => {
    const a = join(tmp.dir, 'wh-a');
    const b = join(tmp.dir, 'wh-b');
    clock.jump(-12 * HOUR); // midday, all in one day
    await night(a, 'alpha', ['a', 'b']);
    await night(b, 'beta', ['c', 'd']);
    await night(a, 'alpha', ['a', 'b', 'e']);
    for (const wh of [a, b]) {
      const alone = await cli(['reconcile', '--warehouse', wh]);
      expect(alone.code, alone.stdout + alone.stderr).toBe(0);
      expect(alone.stdout).toContain("may be another warehouse's (or another tool's) charge");
      expect(alone.stdout).toContain('charge_not_in_ledger');
      const strict = await cli(['reconcile', '--warehouse', wh, '--strict']);
      expect(strict.code).toBe(1);
    }
    const both = await cli(['reconcile', '--warehouse', a, '--warehouse', b, '--json']);
    expect(both.code, both.stdout + both.stderr).toBe(0);
    const [day] = JSON.parse(both.stdout);
    expect(day.discrepancies).toEqual([]);
    expect(day.unaccounted).toEqual([]);
    expect(day.ledgerCny).toBe(sumDecimals(sandbox.log.map((l) => l.chargeCny)));
    expect(day.accountCny).toBe(day.ledgerCny);

    const charge = await foreignCharge();
    const neither = await cli(['reconcile', '--warehouse', a, '--warehouse', b]);
    expect(neither.code).toBe(1);
    expect(neither.stdout).toMatch(new RegExp(`charge_not_in_ledger\\s+${charge.replace('.', '\\.')}00\\s+serp`));
    expect(neither.stdout).not.toContain('another warehouse');
  });
});
