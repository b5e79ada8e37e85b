import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { landedLine, ledgerWriter, RawLanding, reindexRaw, RunStore, type Warehouse } from '../../../src/warehouse/index.js';
import { rawFileName } from '../../../src/warehouse/landing/raw-index.js';
import { compactFixture, response, tempWarehouse } from './helpers.js';

const PATH = '/v3/backlinks/backlinks/live';
const ctx = { runId: 'run-1', pipeline: 'test' };

/** A charged POST's answer, as the client hands it to the landing. */
async function answer(callId: string) {
  return response(PATH, await compactFixture('backlinks.backlinks.live.basic.json'), {
    callId,
    method: 'POST',
    tasksSent: 1,
    charge: { requestId: `svc-${callId}`, chargeCny: '0.0520', costUsd: '0.0072', balanceCny: '99.9480' },
  });
}

const sent = (callId: string) => ({ callId, at: new Date('2026-11-20T08:59:59Z'), method: 'POST', path: PATH, endpointId: 'backlinks.backlinks.live', tasksSent: 1 });

const rows = (wh: Warehouse, callId: string) =>
  wh.all<{ http: number | null; charge: string | null; request_id: string | null }>(
    `SELECT http_status AS http, charge_cny::VARCHAR AS charge, request_id FROM ledger WHERE call_id = $1`,
    [callId],
  );

describe("a charged POST's ledger row is written before it is sent, and its answer replaces it", () => {
  let t: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    t = await tempWarehouse();
  });
  afterEach(async () => t.done());

  it('the row sending wrote is the one row of the call once its answer is landed', async () => {
    const landing = new RawLanding(t.wh, ctx);
    await landing.sending(sent('call-a'));
    expect(await rows(t.wh, 'call-a')).toEqual([{ http: null, charge: null, request_id: null }]);
    await landing.land(await answer('call-a'));
    expect(await rows(t.wh, 'call-a')).toEqual([{ http: 200, charge: '0.052000', request_id: 'svc-call-a' }]);
  });

  it('an attempt that made no connection leaves no row', async () => {
    const landing = new RawLanding(t.wh, ctx);
    await landing.sending(sent('call-b'));
    await landing.notSent('call-b');
    expect(await rows(t.wh, 'call-b')).toEqual([]);
  });

  it('an answer landed but not indexed (killed in between) replaces the row when the raw files are indexed again', async () => {
    const landing = new RawLanding(t.wh, ctx);
    await landing.sending(sent('call-c'));
    // The answer's raw file, as the landing writes it, with no index or ledger row after it.
    const landed = landedLine(await answer('call-c'), ctx);
    const file = rawFileName(t.wh.rawDir, { day: '2026-11-20', kind: landed.kind, runId: ctx.runId, seq: 1, callId: 'call-c' });
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, gzipSync(`${landed.line}\n`));
    expect(await reindexRaw(t.wh)).toBe(1);
    expect(await rows(t.wh, 'call-c')).toEqual([{ http: 200, charge: '0.052000', request_id: 'svc-call-c' }]);
  });

  it('a call none of whose tasks was created (killed after its row, before it went) is priced at 0, though no answered call gives a ratio', async () => {
    const store = new RunStore(t.wh, ctx.runId, ctx.pipeline);
    const tags = ['tag-1', 'tag-2'];
    await store.recordPlanned(
      tags.map((tag) => ({ tag, job: 'j', endpointId: 'backlinks.backlinks.live', batchNo: 1, spec: {} })),
      new Date('2026-11-20T08:59:58Z'),
    );
    await store.recordSending(tags, 'call-d');
    await new RawLanding(t.wh, ctx).sending(sent('call-d'));
    // The next run's look-up by tag finds neither task: the service never created them.
    await store.recordUnsent(tags, 'not found by tag with id_list: the service never created it');
    expect(await ledgerWriter.estimateLost(t.wh, ['call-d'])).toEqual([{ callId: 'call-d', chargeCny: '0.000000', costUsd: '0.000000' }]);
    expect(await rows(t.wh, 'call-d')).toEqual([{ http: null, charge: '0.000000', request_id: null }]);
  });
});
