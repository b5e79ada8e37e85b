import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rawIndexWriter, type RawIndexRow } from '../../../src/warehouse/landing/raw-index.js';
import type { Warehouse } from '../../../src/warehouse/index.js';
import { tempWarehouse } from './helpers.js';

function row(callId: string, receivedAt: string, head: string | null): RawIndexRow {
  return {
    callId,
    endpointId: 'serp.organic.task_get.advanced',
    path: `/v3/serp/engA/organic/task_get/advanced/${callId}`,
    httpStatus: 200,
    requestId: null,
    file: `raw/${receivedAt.slice(0, 10)}/serp--run-cb-000001-${callId.slice(0, 8)}.ndjson.gz`,
    bytes: 0n,
    receivedAt: new Date(receivedAt),
    kind: 'serp',
    parsed: true,
    taskIds: [callId],
    shape: ['tasks:a'],
    byteOffset: 0n,
    head,
  };
}

async function counts(wh: Warehouse): Promise<{ call_id: string; index: number; heads: number }[]> {
  return wh.all(
    `SELECT r.call_id, count(*)::INT AS index, (SELECT count(*) FROM raw_heads h WHERE h.call_id = r.call_id)::INT AS heads
     FROM raw_responses r GROUP BY r.call_id ORDER BY r.call_id`,
  );
}

describe('indexing callbacks only once (rawIndexWriter.rows, onlyNew)', () => {
  let wh: Warehouse;
  let done: () => Promise<void>;
  beforeEach(async () => ({ wh, done } = await tempWarehouse()));
  afterEach(async () => done());

  it('skips a call already indexed, with its head, whatever other nights the index holds', async () => {
    const old = row('aaaaaaaa-0000-4000-8000-000000000001', '2025-11-26T02:00:00.123Z', '{"tasks":[]}');
    const a = row('bbbbbbbb-0000-4000-8000-000000000002', '2026-11-26T02:00:00.456Z', '{"tasks":[{"id":"b"}]}');
    const b = row('cccccccc-0000-4000-8000-000000000003', '2026-11-26T02:03:10.789Z', null);
    await rawIndexWriter.rows(wh, 'run-old', [old], { onlyNew: true });
    await rawIndexWriter.rows(wh, 'run-1', [a, b], { onlyNew: true });
    // The same callbacks again (a re-index after a crash), one of them with a new one beside it.
    const c = row('dddddddd-0000-4000-8000-000000000004', '2026-11-26T02:05:00.000Z', '{"tasks":[{"id":"d"}]}');
    await rawIndexWriter.rows(wh, 'run-1', [a, b], { onlyNew: true });
    await rawIndexWriter.rows(wh, 'run-1', [b, c, a], { onlyNew: true });
    // And the year-old one, alone and beside this night's.
    await rawIndexWriter.rows(wh, 'run-old', [old], { onlyNew: true });
    await rawIndexWriter.rows(wh, 'run-1', [old, c], { onlyNew: true });
    expect(await counts(wh)).toEqual([
      { call_id: old.callId, index: 1, heads: 1 },
      { call_id: a.callId, index: 1, heads: 1 },
      { call_id: b.callId, index: 1, heads: 0 },
      { call_id: c.callId, index: 1, heads: 1 },
    ]);
  });
});
