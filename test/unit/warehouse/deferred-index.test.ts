import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallbackLanding } from '../../../src/collect/land-callback.js';
import { loadLanded, RawLanding, reindexRaw, Warehouse } from '../../../src/warehouse/index.js';
import { compactFixture, response, tempWarehouse } from './helpers.js';

const TASK = '11111111-2222-4333-8444-555555555555';
const SERP_GET = `/v3/serp/engA/organic/task_get/advanced/${TASK}`;
const POST = '/v3/serp/engA/organic/task_post';

async function landedFiles(dir: string): Promise<string[]> {
  return (await readdir(`${dir}/raw`, { recursive: true })).filter((f) => f.endsWith('.ndjson.gz'));
}

async function rowsOf(wh: Warehouse, callId: string): Promise<{ raw: number; ledger: { charge: string | null; request_id: string | null; method: string }[] }> {
  const [r] = await wh.all<{ n: number }>(`SELECT count(*)::INT AS n FROM raw_responses WHERE call_id = $1`, [callId]);
  const ledger = await wh.all<{ charge: string | null; request_id: string | null; method: string }>(
    `SELECT charge_cny::VARCHAR AS charge, request_id, method FROM ledger WHERE call_id = $1`,
    [callId],
  );
  return { raw: r!.n, ledger };
}

describe('deferred raw index rows (free reads indexed in batches)', () => {
  let wh: Warehouse;
  let dir: string;
  let done: () => Promise<void>;
  let indexOn: Warehouse;
  beforeEach(async () => {
    ({ wh, dir, done } = await tempWarehouse());
    indexOn = await wh.sibling();
  });
  afterEach(async () => {
    indexOn.close();
    await done();
  });

  it('indexes a charged POST before its call returns, a free GET when flushed, and a load flushes first', async () => {
    const landing = new RawLanding(wh, { runId: 'run-1', pipeline: 'test' }, { deferFreeReads: true, indexOn });
    const post = response(POST, JSON.stringify({ status_code: 20000, tasks: [] }), { method: 'POST', tasksSent: 1, charge: { requestId: 'req-post', chargeCny: '0.0043', costUsd: '0.0006', balanceCny: '99' } });
    await landing.land(post);
    expect(await rowsOf(wh, post.callId)).toEqual({ raw: 1, ledger: [{ charge: '0.004300', request_id: 'req-post', method: 'POST' }] });

    const get = response(SERP_GET, await compactFixture('serp.task_get.advanced.small.json'), { charge: { requestId: 'req-get', chargeCny: '0', costUsd: '0', balanceCny: null } });
    await landing.land(get);
    // Landed (its file is durable) but not indexed yet.
    expect(await landedFiles(dir)).toHaveLength(2);
    expect(await rowsOf(wh, get.callId)).toEqual({ raw: 0, ledger: [] });

    // A load reads the index: it flushes the deferred rows first, so the task's rows load.
    const report = await loadLanded(wh, { taskIds: [TASK] });
    expect(report.rows.get('serp_results')).toBe(1);
    expect(await rowsOf(wh, get.callId)).toEqual({ raw: 1, ledger: [{ charge: '0.000000', request_id: 'req-get', method: 'GET' }] });
  });

  it('a charged GET is not deferred', async () => {
    const landing = new RawLanding(wh, { runId: 'run-1', pipeline: 'test' }, { deferFreeReads: true, indexOn });
    const get = response(SERP_GET, await compactFixture('serp.task_get.advanced.small.json'), { charge: { requestId: 'req-paid', chargeCny: '0.01', costUsd: null, balanceCny: null } });
    await landing.land(get);
    expect((await rowsOf(wh, get.callId)).raw).toBe(1);
  });

  it('rebuilds deferred rows, ledger included, from the files after a crash; a callback gets no ledger row', async () => {
    const landing = new RawLanding(wh, { runId: 'run-1', pipeline: 'test' }, { deferFreeReads: true, indexOn });
    const get = response(SERP_GET, await compactFixture('serp.task_get.advanced.small.json'), { charge: { requestId: 'req-get', chargeCny: '0', costUsd: '0', balanceCny: '12.5' } });
    await landing.land(get);
    const callback = await new CallbackLanding(dir, { runId: 'run-1', pipeline: 'test' }).land({
      taskId: TASK,
      path: SERP_GET,
      endpointId: 'serp.engA.organic.task_get.advanced',
      body: await compactFixture('serp.task_get.advanced.small.json'),
      receivedAt: new Date('2026-11-20T09:01:00Z'),
    });
    // The process dies: the deferred rows were never committed.
    indexOn.close();
    wh.close();
    wh = await Warehouse.open(dir);
    indexOn = await wh.sibling();
    expect(await rowsOf(wh, get.callId)).toEqual({ raw: 0, ledger: [] });

    expect(await reindexRaw(wh)).toBe(2);
    expect(await rowsOf(wh, get.callId)).toEqual({ raw: 1, ledger: [{ charge: '0.000000', request_id: 'req-get', method: 'GET' }] });
    const [row] = await wh.all<{ balance: string; tasks: number; called_at: string }>(
      `SELECT balance_cny::VARCHAR AS balance, tasks, strftime(called_at, '%Y-%m-%dT%H:%M:%S') AS called_at FROM ledger WHERE call_id = $1`,
      [get.callId],
    );
    expect(row).toEqual({ balance: '12.500000', tasks: 0, called_at: '2026-11-20T09:00:00' });
    expect(await rowsOf(wh, callback.callId)).toEqual({ raw: 1, ledger: [] });
  });
});
