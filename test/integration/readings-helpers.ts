import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/client/index.js';
import { parsePipeline } from '../../src/config/index.js';
import { reconcile } from '../../src/ops/reconcile.js';
import { runPipeline, type RunOptions } from '../../src/run/index.js';
import { fromMicros, toMicros } from '../../src/post/money.js';
import { startSandbox, type AdminStatsBody, type SandboxHandle, type ServedReadings } from '../../src/sandbox/index.js';
import { reindexRaw, withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, sumDecimals, tempDir, warmReferenceLists } from './helpers.js';

/**
 * The money and crash checks of the run under every switchable reading of the emulator
 * (src/sandbox/readings.ts): how a refund shows (`refunds`) and the body of a rate-limit refusal
 * (`rateLimitBody`). readings-money.test.ts runs the cheapest money test under each (refunds.test.ts's
 * night: three deep SERP tasks, two of them refunded, under a tight rate limit so refusals happen),
 * readings-crash*.test.ts the cheapest crash test (run-resume.test.ts's lost answer: the POST is
 * created and charged, its answer never arrives, the next run finds the tasks by tag). In each:
 * the ledger's net spend is what left the emulator's balance, its gross what the emulator charged,
 * `reconcile` is clean, no task is bought twice and none is failed.
 */
export const READING_COMBOS: Partial<ServedReadings>[] = [
  { refunds: 'task-cost', rateLimitBody: 'http429' },
  { refunds: 'balance', rateLimitBody: 'http429' },
  { refunds: 'task-cost', rateLimitBody: 'http200' },
  { refunds: 'balance', rateLimitBody: 'http200' },
];

export const KEY = 'svc_live_testreadings';
// Seven words or more: 20-50 organic results in the emulator, so depth 100 is refunded in part.
const LONG = ['best lightweight trail running shoes for wide feet', 'how to clean white running shoes at home fast'];
export const pipeline = parsePipeline(
  `name: readings\njobs:\n  - kind: serp\n    depth: 100\n    locations: [2840]\n    keywords: [${[...LONG, 'running shoes'].map((k) => JSON.stringify(k)).join(', ')}]\n`,
  'readings.yaml',
  {},
);
export const warmPipeline = parsePipeline(
  `name: warm\njobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [coffee]\n`,
  'warm.yaml',
  {},
);

export async function stats(sb: SandboxHandle): Promise<AdminStatsBody> {
  const res = await request(`${sb.url}/__admin/stats`);
  return (await res.body.json()) as AdminStatsBody;
}

/** Registers a night's set-up in the calling describe: an emulator serving `readings` under a tight rate limit, and a warehouse. */
export function readingsNight(readings: Partial<ServedReadings>) {
  const t = {} as { sandbox: SandboxHandle; proxy?: Server; tmp: { dir: string; cleanup: () => Promise<void> } };
  beforeEach(async () => {
    // A "minute" of 200 ms and 2 SERP calls in it: the run's polls and reads are refused often.
    t.sandbox = await startSandbox({
      readyAfterMs: 0,
      readings,
      admin: true,
      timeScale: 300,
      rateLimits: { serp_keywords_domain: 2 },
    });
    t.tmp = await tempDir('pipeline-readings-');
    // The SERP places were checked by an earlier night: the runs' calls are the night's own.
    await warmReferenceLists(t.tmp.dir, pipeline, 'readings.yaml', () => new Date());
  });
  afterEach(async () => {
    await new Promise<void>((r) => (t.proxy ? t.proxy.close(() => r()) : r()));
    t.proxy = undefined;
    await t.sandbox.close();
    await t.tmp.cleanup();
  });

  const base = (url: string, extra: Partial<RunOptions> = {}): RunOptions => ({
    pipeline,
    file: 'readings.yaml',
    warehouseDir: t.tmp.dir,
    baseUrl: url,
    apiKey: KEY,
    logger: silentLogger,
    pollIntervalMs: 5,
    collectTimeoutMs: 20_000,
    // The checks read the ledger, the tasks and the emulator: no mart.
    models: false,
    ...extra,
  });

  /** The money checks every night must pass, whatever the reading. */
  async function moneyChecks(runId: string, tags = 3): Promise<void> {
    const s = await stats(t.sandbox);
    // No task bought twice: each tag created once.
    expect(Object.values(s.tasks_created_by_tag).every((n) => n === 1)).toBe(true);
    expect(Object.keys(s.tasks_created_by_tag)).toHaveLength(tags);
    const gross = sumDecimals(t.sandbox.log.map((l) => l.chargeCny));
    const net = fromMicros(toMicros('1000') - toMicros(t.sandbox.balanceCny()));
    // Two tasks were refunded in part: the unused depth blocks, unless further blocks are free (nothing to refund).
    if (readings.extraDepthPrice === 0) expect(net).toBe(gross);
    else expect(toMicros(net)).toBeLessThan(toMicros(gross));
    await withWarehouse(t.tmp.dir, async (wh) => {
      const [l] = await wh.all<{ net: string; gross: string }>(
        `SELECT sum(charge_cny)::VARCHAR AS net, (sum(charge_cny) FILTER (WHERE task_id IS NULL))::VARCHAR AS gross FROM ledger`,
      );
      expect(l!.gross).toBe(gross);
      expect(l!.net).toBe(net);
      const tasks = await wh.all<{ state: string; n: number }>(
        `SELECT state, count(*)::INT AS n FROM tasks WHERE run_id = $1 GROUP BY state`,
        [runId],
      );
      expect(tasks).toEqual([{ state: 'collected', n: 3 }]);
      // One reading of refunds at a time: task-cost rows under task-cost, balance rows under balance (none
      // where further depth blocks are free).
      const kinds = await wh.all<{ k: string }>(
        `SELECT DISTINCT CASE WHEN call_id LIKE 'refund:balance:%' THEN 'balance' ELSE 'task-cost' END AS k FROM ledger WHERE task_id IS NOT NULL`,
      );
      expect(kinds).toEqual(readings.extraDepthPrice === 0 ? [] : [{ k: readings.refunds }]);
    });
    const client = new ServiceClient({ baseUrl: t.sandbox.url, apiKey: KEY, land: async () => {} });
    const r = await withWarehouse(t.tmp.dir, (wh) => reconcile(wh, client));
    expect(r.discrepancies).toEqual([]);
  }

  return { t, base, moneyChecks };
}

/** The cheapest crash test under each of `combos` (readings-crash*.test.ts: two files, each under a minute). */
export function crashTests(combos: readonly Partial<ServedReadings>[]): void {
  describe.each(combos.map((r) => [readingsLabel(r), { ...DEFAULTS, ...r }] as const))('under %s', (_label, readings) => {
    const { t, base, moneyChecks } = readingsNight(readings);

    it('crash: a POST whose answer was lost is found by tag, never bought twice, and the money still adds up', async () => {
      // An answered night of another pipeline first: the ledger knows what a SERP POST costs in CNY
      // per USD, so the lost POST is priced once its tasks are found (run-resume.test.ts).
      const warm = await runPipeline(base(t.sandbox.url, { pipeline: warmPipeline, file: 'warm.yaml' }));
      expect(warm.state).toBe('completed');
      // A proxy that forwards every call to the emulator and drops each answer on the floor.
      t.proxy = createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        await request(t.sandbox.url + req.url, {
          method: req.method as 'GET' | 'POST',
          headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        }).then((r) => r.body.dump());
        res.socket?.destroy();
      });
      await new Promise<void>((r) => t.proxy!.listen(0, '127.0.0.1', r));
      const first = await runPipeline(
        base(`http://127.0.0.1:${(t.proxy.address() as AddressInfo).port}`, { collectTimeoutMs: 0, sleep: async () => {} }),
      );
      expect(first.stopKind).toBe('unknown');
      const second = await runPipeline(base(t.sandbox.url));
      expect(second.runId).toBe(first.runId);
      expect(second.state).toBe('completed');
      // The warm night's POST and the lost one; at one task a POST, the lost POST created its first task
      // only (found by tag), and the other two are posted once each by the second run.
      const charged = readings.asyncTasksPerPost === 1 ? 4 : 2;
      expect(t.sandbox.log.filter((l) => l.path.endsWith('/task_post') && Number(l.chargeCny) > 0)).toHaveLength(charged);
      await moneyChecks(second.runId, 4);
    });
  });
}

/** The two readings every combination names; the others keep the emulator's default unless given. */
const DEFAULTS = { refunds: 'task-cost', rateLimitBody: 'http429' } as const;

/** `refunds=balance, clockSkew=120` for a test's name. */
export function readingsLabel(r: Partial<ServedReadings>): string {
  return Object.entries(r)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(', ');
}

/** The cheapest money test under each of `combos` (readings-money*.test.ts). */
export function moneyTests(combos: readonly Partial<ServedReadings>[]): void {
  describe.each(combos.map((r) => [readingsLabel(r), { ...DEFAULTS, ...r }] as const))('under %s', (_label, readings) => {
    const { t, base, moneyChecks } = readingsNight(readings);

    it('money: the night is charged what left the balance, reconcile is clean, nothing is bought twice or failed', async () => {
      const summary = await runPipeline(base(t.sandbox.url));
      expect(summary.state).toBe('completed');
      expect(summary.tasks).toMatchObject({ collected: 3, failed: 0 });
      expect(summary.chargedCny).toBe(fromMicros(toMicros('1000') - toMicros(t.sandbox.balanceCny())));
      // The tight limit did refuse calls, in the reading's body.
      const refused = await withWarehouse(t.tmp.dir, async (wh) => {
        const [r] = await wh.all<{ n: number }>(
          `SELECT count(*)::INT AS n FROM read_json('${wh.dir}/raw/**/*.gz', format = 'newline_delimited', columns = {body: 'VARCHAR'})
         WHERE body LIKE '%"status_code":40202%'`,
        );
        return r!.n;
      });
      expect(refused).toBeGreaterThan(0);
      if (readings.rateLimitBody === 'http429') expect((await stats(t.sandbox)).status_counts['429']).toBe(refused);
      await moneyChecks(summary.runId);
      // A reindex after a crash rebuilds the same ledger from the landed bodies, refunds included.
      await withWarehouse(t.tmp.dir, async (wh) => {
        const before = await wh.all(`SELECT call_id, charge_cny::VARCHAR AS c FROM ledger WHERE task_id IS NOT NULL ORDER BY call_id`);
        await wh.run(`DELETE FROM ledger`);
        await wh.run(`DELETE FROM raw_responses`);
        await reindexRaw(wh);
        expect(await wh.all(`SELECT call_id, charge_cny::VARCHAR AS c FROM ledger WHERE task_id IS NOT NULL ORDER BY call_id`)).toEqual(
          before,
        );
        const [n] = await wh.all<{ net: string }>(`SELECT sum(charge_cny)::VARCHAR AS net FROM ledger`);
        expect(n!.net).toBe(summary.chargedCny);
      });
    });
  });
}
