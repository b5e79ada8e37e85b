import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { planProbe, PROBE_ENDPOINT, PROBE_LIMIT_CNY } from '../../src/ops/probe-plan.js';
import { runProbe } from '../../src/ops/probe.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { RawLanding, readServiceReadings, SERVICE_READINGS_FILE, withWarehouse } from '../../src/warehouse/index.js';
import { pipelineCli, sumDecimals, tempDir } from './helpers.js';

const KEY = 'svc_live_testprobesecret42';

/** What `pipeline doctor --probe --json` prints. */
interface ProbeJson {
  plan: { costCny: number; tasks: number; depth: number; baseSource: string };
  record: {
    account: string | null;
    chargedCny: string;
    readings: Record<string, { value: unknown; detail: string }>;
  } | null;
  file: string | null;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function emulator(opts: Parameters<typeof startSandbox>[0] = {}): Promise<{ sb: SandboxHandle; dir: string }> {
  const sb = await startSandbox({ keys: [KEY], readyAfterMs: 300, ...opts });
  const tmp = await tempDir('pipeline-probe-');
  cleanups.push(() => sb.close(), tmp.cleanup);
  return { sb, dir: join(tmp.dir, 'wh') };
}

/** The real CLI against the emulator; the sum the emulator charged for the calls of this one command. */
async function probe(
  sb: SandboxHandle,
  dir: string,
  yes: boolean,
): Promise<{ out: ProbeJson; stdout: string; code: number; charged: string }> {
  const before = sb.log.length;
  const env = { ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: sb.url, PIPELINE_PROBE_POLL_MS: '50' };
  const r = await pipelineCli(['doctor', '--probe', ...(yes ? ['--yes'] : []), '--json', '--warehouse', dir], env);
  expect(r.stderr).not.toContain('probesecret42');
  expect(r.stdout).not.toContain('probesecret42');
  const charged = sumDecimals(sb.log.slice(before).map((e) => e.chargeCny));
  return { out: JSON.parse(r.stdout) as ProbeJson, stdout: r.stdout, code: r.code, charged };
}

/** The stated cost covers what the emulator charged, and stays within the limit. */
function expectWithinStated(run: { out: ProbeJson; charged: string }): void {
  expect(run.out.plan.costCny).toBeLessThanOrEqual(PROBE_LIMIT_CNY);
  expect(Number(run.charged)).toBeGreaterThan(0);
  expect(Number(run.charged)).toBeLessThanOrEqual(run.out.plan.costCny);
  expect(run.out.record!.chargedCny).toBe(Number(run.charged).toFixed(4));
}

describe('pipeline doctor --probe', () => {
  it('without --yes states the plan and its cost and calls nothing (the emulator saw no call)', async () => {
    const { sb, dir } = await emulator();
    const r = await probe(sb, dir, false);
    expect(r.code).toBe(0);
    expect(sb.log).toEqual([]);
    expect(r.out.record).toBeNull();
    expect(r.out.plan).toMatchObject({ baseSource: 'spec', tasks: 1, depth: 20, costCny: 0.042 });
    expect(existsSync(join(dir, SERVICE_READINGS_FILE))).toBe(false);
    const text = await pipelineCli(['doctor', '--probe', '--warehouse', dir], { ...process.env, SVC_API_KEY: KEY, SVC_BASE_URL: sb.url });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('stated cost: at most 0.0420 CNY (limit 0.05 CNY)');
    expect(text.stdout).toContain('nothing was called: run again with --yes');
    expect(sb.log).toEqual([]);
  });

  for (const refunds of ['task-cost', 'balance'] as const) {
    it(`reports refunds=${refunds} under the emulator serving it, within the stated cost, and records it without the key`, async () => {
      const { sb, dir } = await emulator({ readings: { refunds } });
      // First probe: no price known, the spec's reference allows one task at depth 20 (its 20 results are all there).
      const first = await probe(sb, dir, true);
      expect(first.code).toBe(0);
      expectWithinStated(first);
      expect(first.out.plan).toMatchObject({ baseSource: 'spec', tasks: 1, depth: 20 });
      expect(first.out.record!.readings.asyncTasksPerPost!.value).toBe('not-probed');
      // Second probe: priced from the first one's charge, it goes deep enough for a refund and posts 2 tasks.
      const second = await probe(sb, dir, true);
      expectWithinStated(second);
      expect(second.out.plan).toMatchObject({ baseSource: 'ledger', tasks: 2 });
      expect(second.out.plan.depth).toBeGreaterThan(50); // the long tail has 20-50 results in the emulator
      const rec = second.out.record!;
      expect(rec.readings.refunds!.value).toBe(refunds);
      expect(rec.readings.asyncTasksPerPost!.value).toBe(100);
      expect(rec.readings.rateLimitBody!.value).toBe('not-probed');
      expect(rec.readings.aiCodes!.value).toBe(20000);
      expect(rec.readings.clockSkewSeconds!.value).toSatisfy((v: unknown) => typeof v === 'number' && Math.abs(v) <= 2);
      expect(rec.account).toBe('sandbox-live');
      // Recorded in the warehouse folder, read back through the one function; the key is nowhere in it.
      expect(await readServiceReadings(dir)).toEqual(rec);
      expect(await readFile(join(dir, SERVICE_READINGS_FILE), 'utf8')).not.toContain('probesecret42');
    });
  }

  it('reports 1 task per async POST when the second task of its POST gets 40006 (not charged)', async () => {
    const { sb, dir } = await emulator({ maxTasksPerPost: 1 });
    await probe(sb, dir, true);
    const second = await probe(sb, dir, true);
    expectWithinStated(second);
    expect(second.out.plan.tasks).toBe(2);
    expect(second.out.record!.readings.asyncTasksPerPost).toMatchObject({ value: 1 });
  });

  it('measures the service clock against ours and finds that id_list needs the service clock', async () => {
    const { sb, dir } = await emulator({ readings: { rateLimitBody: 'http200' } });
    const behind = 120_000; // our clock two minutes behind the service's
    const { record } = await withWarehouse(dir, async (wh) => {
      const landing = new RawLanding(wh, { runId: 'probe-test', pipeline: 'doctor-probe' });
      return runProbe({
        baseUrl: sb.url,
        apiKey: KEY,
        wh,
        land: landing.land,
        yes: true,
        pollMs: 50,
        now: () => new Date(Date.now() - behind),
      });
    });
    expect(record!.readings.clockSkewSeconds!.value).toSatisfy((v: unknown) => typeof v === 'number' && Math.abs(v - 120) <= 2);
    expect(record!.readings.clockSkewSeconds!.detail).toContain(
      "id_list bounded by the service's clock lists the task, by ours misses the task",
    );
    // The rate-limit body is never provoked, whatever the service serves.
    expect(record!.readings.rateLimitBody).toMatchObject({ value: 'not-probed' });
  });

  it('plans within 0.05 CNY at any price it can afford, and calls nothing when even the shallowest task would pass it', async () => {
    const at = (cny: number) => planProbe({ byPipeline: new Map([[`nightly\0${PROBE_ENDPOINT}`, cny]]) });
    for (const cny of [0.001, 0.0043, 0.01, 0.02, 0.028]) expect(at(cny).costCny).toBeLessThanOrEqual(PROBE_LIMIT_CNY);
    expect(at(0.0043)).toMatchObject({ tasks: 2, depth: 100, costCny: 0.0377 });
    expect(at(0.02)).toMatchObject({ tasks: 1, depth: 30, costCny: 0.05 });
    expect(at(0.03).costCny).toBeGreaterThan(PROBE_LIMIT_CNY);
    const { sb, dir } = await emulator();
    await expect(
      withWarehouse(dir, async (wh) => {
        await wh.run(
          `INSERT INTO ledger (call_id, run_id, pipeline, endpoint_id, called_at, http_status, tasks, charge_cny, cost_usd) VALUES ('c1', 'r1', 'nightly', '${PROBE_ENDPOINT}', now(), 200, 1, 0.03, 0.004)`,
        );
        return runProbe({ baseUrl: sb.url, apiKey: KEY, wh, yes: true });
      }),
    ).rejects.toThrow(/over its 0.05 CNY limit/);
    expect(sb.log).toEqual([]);
  });
});
