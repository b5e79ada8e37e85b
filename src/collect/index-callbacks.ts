import { relative } from 'node:path';
import { booleans, ledgerWriter, runColumns, varchars, type Warehouse } from '../warehouse/index.js';
import type { LandedCallback } from './land-callback.js';

/**
 * Indexes landed callbacks in `raw_responses` from what the landing already knows (the
 * same row `reindexRaw` would read back from the file, without reading and parsing every
 * body again). Rows already indexed are left alone. No ledger row for the callback: it is
 * not a call this tool made, and it is not charged; a postback whose task came back with a
 * lower cost than posted gives the task's refund row (ledger.ts).
 */
export async function indexCallbacks(wh: Warehouse, runId: string, items: readonly LandedCallback[]): Promise<void> {
  if (items.length === 0) return;
  await runColumns(
    wh,
    `INSERT INTO raw_responses (call_id, run_id, endpoint_id, path, http_status, request_id, file, bytes, received_at, kind, parsed, task_ids, shape, byte_offset)
     SELECT call_id, $1, endpoint_id, path, 200, NULL, file, 0, received_at::TIMESTAMPTZ, kind, parsed, task_ids::JSON::VARCHAR[], shape::JSON::VARCHAR[], 0
     FROM (SELECT unnest($2::VARCHAR[]) AS call_id, unnest($3::VARCHAR[]) AS endpoint_id, unnest($4::VARCHAR[]) AS path, unnest($5::VARCHAR[]) AS file,
                  unnest($6::VARCHAR[]) AS received_at, unnest($7::VARCHAR[]) AS kind, unnest($8::BOOLEAN[]) AS parsed,
                  unnest($9::VARCHAR[]) AS task_ids, unnest($10::VARCHAR[]) AS shape)
     WHERE call_id NOT IN (SELECT call_id FROM raw_responses)`,
    [
      runId,
      varchars(items.map((c) => c.callId)),
      varchars(items.map((c) => c.index.endpointId)),
      varchars(items.map((c) => c.index.path)),
      varchars(items.map((c) => relative(wh.dir, c.file))),
      varchars(items.map((c) => c.index.receivedAt.toISOString())),
      varchars(items.map((c) => c.index.kind)),
      booleans(items.map((c) => c.index.parsed)),
      varchars(items.map((c) => JSON.stringify(c.index.taskIds))),
      varchars(items.map((c) => JSON.stringify(c.index.shape))),
    ],
  );
  await ledgerWriter.refunds(
    wh,
    items.flatMap((c) => c.index.taskCosts.map((t) => ({ ...t, seenAt: c.index.receivedAt }))),
  );
}
