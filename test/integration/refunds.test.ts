import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/client/index.js';
import { parsePipeline } from '../../src/config/index.js';
import { reconcile } from '../../src/ops/reconcile.js';
import { runPipeline, type RunSummary } from '../../src/run/index.js';
import { fromMicros, toMicros } from '../../src/post/money.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { reindexRaw, withWarehouse } from '../../src/warehouse/index.js';
import { silentLogger, sumDecimals, tempDir } from './helpers.js';

const KEY = 'svc_live_testrefunds';
// Keywords of seven words or more have only 20-50 organic results in the emulator: at depth
// 100 their unused blocks are refunded. The short one is served in full (no refund).
const LONG = ['best lightweight trail running shoes for wide feet', 'how to clean white running shoes at home fast'];
const pipeline = parsePipeline(
  `name: refunds\njobs:\n  - kind: serp\n    depth: 100\n    locations: [2840]\n    keywords: [${[...LONG, 'running shoes'].map((k) => JSON.stringify(k)).join(', ')}]\n`,
  'refunds.yaml',
  {},
);

async function post(
  url: string,
  tasks: unknown[],
): Promise<{ charge: string; balance: string; body: { tasks: { id: string; cost: number }[] } }> {
  const res = await request(`${url}/v3/serp/engA/organic/task_post`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(tasks),
  });
  return {
    charge: String(res.headers['x-svc-charge-cny']),
    balance: String(res.headers['x-svc-balance-cny']),
    body: (await res.body.json()) as never,
  };
}

async function get(
  url: string,
  path: string,
): Promise<{ balance: string; body: { tasks: { id: string; cost: number; result: unknown }[] } }> {
  const res = await request(`${url}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
  return { balance: String(res.headers['x-svc-balance-cny']), body: (await res.body.json()) as never };
}

describe('refunds of unused depth (issue 16, point 3)', () => {
  let sandbox: SandboxHandle;
  let tmp: { dir: string; cleanup: () => Promise<void> };

  beforeEach(async () => {
    sandbox = await startSandbox({ readyAfterMs: 0 });
    tmp = await tempDir('pipeline-refund-');
  });
  afterEach(async () => {
    await sandbox.close();
    await tmp.cleanup();
  });

  it('the emulator refunds when the task is done, collected or not; task_get then shows the net cost', async () => {
    const posted = await post(sandbox.url, [{ keyword: LONG[0], location_code: 2840, language_code: 'en', depth: 100 }]);
    const id = posted.body.tasks[0]!.id;
    expect(Number(posted.balance)).toBe(Number((1000 - Number(posted.charge)).toFixed(4)));
    // Any call after the task is done sees the refund in the balance; nothing was collected.
    const ready = await get(sandbox.url, '/v3/serp/engA/organic/tasks_ready');
    expect(Number(ready.balance)).toBeGreaterThan(Number(posted.balance));
    const refunded = toMicros(ready.balance) - toMicros(posted.balance);
    // The refund is what the unused blocks cost: the depth served is priced, the rest came back.
    const got = await get(sandbox.url, `/v3/serp/engA/organic/task_get/advanced/${id}`);
    const task = got.body.tasks[0]!;
    expect(task.cost).toBeLessThan(posted.body.tasks[0]!.cost);
    const served = ((task.result as { items: { type: string }[] }[])[0]!.items ?? []).filter((i) => i.type === 'organic').length;
    expect(served).toBeGreaterThanOrEqual(20);
    expect(served).toBeLessThan(100);
    const blocksBack = 9 - (Math.ceil(served / 10) - 1);
    expect(fromMicros(refunded)).toBe(fromMicros(BigInt(blocksBack) * 3200n));
    // Fetching again refunds nothing more.
    const again = await get(sandbox.url, `/v3/serp/engA/organic/task_get/advanced/${id}`);
    expect(again.balance).toBe(ready.balance);
    expect(again.body.tasks[0]!.cost).toBe(task.cost);
  });

  it('records a refund row per refunded task; the summary, spend_daily and reconcile show net spend with no false alarm', async () => {
    const summary: RunSummary = await runPipeline({
      pipeline,
      file: 'refunds.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
    });
    expect(summary.state).toBe('completed');
    const gross = sumDecimals(sandbox.log.map((l) => l.chargeCny));
    const net = fromMicros(toMicros('1000') - toMicros(sandbox.balanceCny()));
    expect(toMicros(net)).toBeLessThan(toMicros(gross));
    await withWarehouse(tmp.dir, async (wh) => {
      const refunds = await wh.all<{
        task_id: string;
        charge: string;
        refund: string;
        method: string;
        keyword: string;
        run_id: string;
        tasks: number;
      }>(
        `SELECT l.task_id, l.charge_cny::VARCHAR AS charge, l.refund_cny::VARCHAR AS refund, l.method, t.spec->>'keyword' AS keyword, l.run_id, l.tasks
         FROM ledger l JOIN tasks t USING (task_id) WHERE l.task_id IS NOT NULL ORDER BY keyword`,
      );
      // One row per refunded task, linked to it, negative; the short keyword has none.
      expect(refunds.map((r) => r.keyword)).toEqual([...LONG].sort().map((k) => k.toLowerCase()));
      for (const r of refunds) {
        expect(r.method).toBe('REFUND');
        expect(r.run_id).toBe(summary.runId);
        expect(r.tasks).toBe(0);
        expect(toMicros(r.charge)).toBe(-toMicros(r.refund));
        expect(toMicros(r.refund)).toBeGreaterThan(0n);
      }
      // The ledger's net sum is exactly what left the balance.
      const [l] = await wh.all<{ net: string; gross: string; calls: number }>(
        `SELECT sum(charge_cny)::VARCHAR AS net, (sum(charge_cny) FILTER (WHERE task_id IS NULL))::VARCHAR AS gross, count(*) FILTER (WHERE task_id IS NULL)::INT AS calls FROM ledger`,
      );
      expect(l!.net).toBe(net);
      expect(l!.gross).toBe(gross);
      expect(l!.calls).toBe(sandbox.log.length);
      expect(summary.chargedCny).toBe(net);
      expect(summary.refundedCny).toBe(sumDecimals(refunds.map((r) => r.refund)));
      expect(summary.calls).toBe(sandbox.log.length);
      // The mart shows net spend, with the gross and the refunds beside it.
      const [spend] = await wh.all<{ net: string; gross: string; refund: string; n: number }>(
        `SELECT sum(charge_cny)::VARCHAR AS net, sum(gross_charge_cny)::VARCHAR AS gross, sum(refund_cny)::VARCHAR AS refund, sum(refunded_tasks)::INT AS n FROM spend_daily`,
      );
      expect(spend).toEqual({ net: l!.net, gross: l!.gross, refund: summary.refundedCny, n: 2 });

      // A reindex after a crash rebuilds the same refund rows from the landed bodies.
      await wh.run(`DELETE FROM ledger`);
      await wh.run(`DELETE FROM raw_responses`);
      await reindexRaw(wh);
      const again = await wh.all<{ task_id: string; charge: string }>(
        `SELECT task_id, charge_cny::VARCHAR AS charge FROM ledger WHERE task_id IS NOT NULL ORDER BY task_id`,
      );
      expect(again).toEqual(
        [...refunds].sort((a, b) => a.task_id.localeCompare(b.task_id)).map((r) => ({ task_id: r.task_id, charge: r.charge })),
      );
      const [n] = await wh.all<{ net: string }>(`SELECT sum(charge_cny)::VARCHAR AS net FROM ledger`);
      expect(n!.net).toBe(net);
    });
    const client = new ServiceClient({ baseUrl: sandbox.url, apiKey: KEY, land: async () => {} });
    const r = await withWarehouse(tmp.dir, (wh) => reconcile(wh, client));
    expect(r.discrepancies).toEqual([]);
    expect(r.refundedCny).toBe(summary.refundedCny);
    expect(r.ledgerCny).toBe(gross);
  });

  it('reconcile still reports a balance rise beyond the recorded refunds', async () => {
    const summary = await runPipeline({
      pipeline,
      file: 'refunds.yaml',
      warehouseDir: tmp.dir,
      baseUrl: sandbox.url,
      apiKey: KEY,
      logger: silentLogger,
      pollIntervalMs: 5,
    });
    // Forget one refund row: its rise is now unexplained, for exactly its amount.
    const lost = await withWarehouse(tmp.dir, async (wh) => {
      const [row] = await wh.all<{ call_id: string; refund: string }>(
        `SELECT call_id, refund_cny::VARCHAR AS refund FROM ledger WHERE task_id IS NOT NULL ORDER BY call_id LIMIT 1`,
      );
      await wh.run(`DELETE FROM ledger WHERE call_id = $1`, [row!.call_id]);
      return row!.refund;
    });
    const client = new ServiceClient({ baseUrl: sandbox.url, apiKey: KEY, land: async () => {} });
    const r = await withWarehouse(tmp.dir, (wh) => reconcile(wh, client));
    expect(Number(summary.refundedCny)).toBeGreaterThan(Number(lost));
    expect(r.discrepancies.map((d) => [d.kind, d.amountCny])).toEqual([['unmatched_refund', lost]]);
  });
});
