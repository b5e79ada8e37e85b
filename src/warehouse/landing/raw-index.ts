import { join } from 'node:path';
import { bigints, booleans, integers, runColumns, varchars } from '../bulk.js';
import { receivedBetween } from '../columns.js';
import type { Warehouse } from '../warehouse.js';

/** What `raw_responses` keeps of one landed response. */
export interface RawIndexRow {
  callId: string;
  endpointId: string;
  path: string;
  httpStatus: number;
  requestId: string | null;
  /** The landed file, relative to the warehouse folder. */
  file: string;
  bytes: bigint;
  receivedAt: Date;
  kind: string;
  parsed: boolean;
  taskIds: readonly string[];
  shape: readonly string[];
  byteOffset: bigint;
  /** Its head for `raw_heads` (raw-landing.ts `headOf`), if it has one. */
  head?: string | null;
  /** The name of what was asked (the client's `requestHash`), for a call with a body. */
  requestHash?: string | null;
}

/**
 * The one statement that writes `raw_responses`: rows of `relation` (which has the index's
 * columns). With `onlyNew`, rows the index holds already are skipped, so indexing the same
 * response twice changes nothing (callbacks, reindex); the landing indexes calls it has just
 * made, whose ids are new, and skips that look-up (the index holds a year of calls). The raw
 * landing, the callback loader and the reindex all write through it.
 */
function insertFrom(relation: string, onlyNew: boolean, within = ''): string {
  return `
    INSERT INTO raw_responses (call_id, run_id, endpoint_id, path, http_status, request_id, file, bytes, received_at, kind, parsed, task_ids, shape, byte_offset, request_hash)
    SELECT call_id, run_id, endpoint_id, path, http_status, request_id, file, bytes, received_at, kind, parsed, task_ids, shape, byte_offset, request_hash
    FROM ${relation} AS r
    ${onlyNew ? `WHERE ${notIndexed('raw_responses', relation, within)}` : ''}`;
}

/** The rows of `relation` whose call `table` does not hold yet (`within`: a bound on the held rows' `received_at`). */
function notIndexed(table: string, relation: string, within: string): string {
  return `call_id NOT IN (SELECT call_id FROM ${table} WHERE call_id IN (SELECT call_id FROM ${relation} AS s)${within})`;
}

/**
 * ` AND received_at BETWEEN …` around the given rows' times. A response is indexed with the
 * `received_at` its landed line holds, so a row already indexed for the same call has the same
 * time, and the look for it skips the row groups of other nights by their zone maps instead of
 * reading a year of call ids for each batch of callbacks. Every landing writes the time
 * on the line; an index row without one (a line that held none) is not looked for.
 */
function receivedAround(rows: readonly RawIndexRow[]): string {
  let lo = Infinity;
  let hi = -Infinity;
  for (const r of rows) {
    const ms = r.receivedAt.getTime();
    if (ms < lo) lo = ms;
    if (ms > hi) hi = ms;
  }
  return receivedBetween(BigInt(lo) * 1000n, BigInt(hi) * 1000n);
}

/** The one writer of the raw index (`raw_responses`). */
export const rawIndexWriter = {
  /** Index rows of responses a landing knows (one statement for the group; the caller holds the transaction). */
  async rows(wh: Warehouse, runId: string, rows: readonly RawIndexRow[], o: { onlyNew: boolean }): Promise<void> {
    if (rows.length === 0) return;
    const params = `(SELECT unnest($1::VARCHAR[]) AS call_id, $2 AS run_id, unnest($3::VARCHAR[]) AS endpoint_id, unnest($4::VARCHAR[]) AS path,
            unnest($5::INTEGER[]) AS http_status, unnest($6::VARCHAR[]) AS request_id, unnest($7::VARCHAR[]) AS file, unnest($8::BIGINT[]) AS bytes,
            unnest($9::VARCHAR[])::TIMESTAMPTZ AS received_at, unnest($10::VARCHAR[]) AS kind, unnest($11::BOOLEAN[]) AS parsed,
            unnest($12::VARCHAR[])::JSON::VARCHAR[] AS task_ids, unnest($13::VARCHAR[])::JSON::VARCHAR[] AS shape, unnest($14::BIGINT[]) AS byte_offset,
            unnest($15::VARCHAR[]) AS request_hash)`;
    await runColumns(wh, insertFrom(params, o.onlyNew, o.onlyNew ? receivedAround(rows) : ''), [
      varchars(rows.map((r) => r.callId)),
      runId,
      varchars(rows.map((r) => r.endpointId)),
      varchars(rows.map((r) => r.path)),
      integers(rows.map((r) => r.httpStatus)),
      varchars(rows.map((r) => r.requestId)),
      varchars(rows.map((r) => r.file)),
      bigints(rows.map((r) => r.bytes)),
      varchars(rows.map((r) => r.receivedAt.toISOString())),
      varchars(rows.map((r) => r.kind)),
      booleans(rows.map((r) => r.parsed)),
      varchars(rows.map((r) => JSON.stringify(r.taskIds))),
      varchars(rows.map((r) => JSON.stringify(r.shape))),
      bigints(rows.map((r) => r.byteOffset)),
      varchars(rows.map((r) => r.requestHash ?? null)),
    ]);
    const heads = rows.filter((r) => r.head);
    if (heads.length === 0) return;
    const given = `(SELECT unnest($1::VARCHAR[]) AS call_id, $2 AS run_id, unnest($3::VARCHAR[])::TIMESTAMPTZ AS received_at, unnest($4::VARCHAR[]) AS head)`;
    await runColumns(
      wh,
      `INSERT INTO raw_heads (call_id, run_id, received_at, head) SELECT call_id, run_id, received_at, head FROM ${given} AS r
       ${o.onlyNew ? `WHERE ${notIndexed('raw_heads', given, receivedAround(heads))}` : ''}`,
      [varchars(heads.map((r) => r.callId)), runId, varchars(heads.map((r) => r.receivedAt.toISOString())), varchars(heads.map((r) => r.head!))],
    );
  },

  /** Index rows from a relation with the index's columns (the reindex's temp table of files read back). */
  async from(wh: Warehouse, relation: string): Promise<void> {
    await wh.run(insertFrom(relation, true));
  },
};

/**
 * The one naming scheme of landed files: `raw/<day>/<kind>--<run>-[cb-]<n>-<call>.ndjson.gz`.
 * The kind leads, so a load reads one kind's files together with one schema; `cb-` marks
 * bodies the service sent us (callbacks), which are not our calls and get no ledger row.
 */
export function rawFileName(rawDir: string, o: { day: string; kind: string; runId: string; seq: number; callId: string; callback?: boolean }): string {
  const n = String(o.seq).padStart(6, '0');
  return join(rawDir, o.day, `${o.kind}--${o.runId}-${o.callback ? 'cb-' : ''}${n}-${o.callId.slice(0, 8)}.ndjson.gz`);
}
