import { relative } from 'node:path';
import { ledgerWriter, rawIndexWriter, type Warehouse } from '../warehouse/index.js';
import type { LandedCallback } from './land-callback.js';

/**
 * Indexes landed callbacks in `raw_responses` from what the landing already knows (the
 * same row `reindexRaw` would read back from the file, without reading and parsing every
 * body again), through the raw index's one writer. Rows already indexed are left alone. No
 * ledger row for the callback: it is not a call this tool made, and it is not charged; a
 * postback whose task came back with a lower cost than posted gives the task's refund row
 * (ledger.ts).
 */
export async function indexCallbacks(wh: Warehouse, runId: string, items: readonly LandedCallback[]): Promise<void> {
  await rawIndexWriter.rows(
    wh,
    runId,
    items.map((c) => ({
      callId: c.callId,
      endpointId: c.index.endpointId,
      path: c.index.path,
      httpStatus: 200,
      requestId: null,
      file: relative(wh.dir, c.file),
      bytes: 0n,
      receivedAt: c.index.receivedAt,
      kind: c.index.kind,
      parsed: c.index.parsed,
      taskIds: c.index.taskIds,
      shape: c.index.shape,
      byteOffset: 0n,
      head: c.index.head,
    })),
    { onlyNew: true },
  );
  await ledgerWriter.refunds(
    wh,
    items.flatMap((c) => c.index.taskCosts.map((t) => ({ ...t, seenAt: c.index.receivedAt }))),
  );
}
