import { join } from 'node:path';
import { sqlString } from '../columns.js';
import { reindexRaw } from './reindex.js';
import type { Warehouse } from '../warehouse.js';

/** A paid answer already landed for a request: its body and the charge it came with. */
export interface LandedAnswer {
  /** The call that bought it (its ledger row). */
  callId: string;
  httpStatus: number;
  charge: { requestId: string | null; chargeCny: string | null; costUsd: string | null; balanceCny: string | null };
  /** The body as landed (the bytes received, callback secrets cut out). */
  body: string;
}

/** Per warehouse, the calls sent and unanswered in the ledger that a look for their landed files was made for already. */
const lookedFor = new WeakMap<Warehouse, Set<string>>();

/**
 * The newest successful answer (HTTP 2xx, a JSON body) landed for the request named
 * `requestHash` (the client's `requestHash`), read back from its raw file; undefined when
 * none was landed, or its file cannot be read (the answer is lost: only asking again gets it).
 * A process killed after a paid answer was landed and before what it said was kept finds it
 * here on the rerun, and does not buy it again.
 *
 * Killed between an answer's durable file and the commit of its index rows, the call is in the
 * ledger as sent and unanswered (written before it went): when such a call of `path` is there,
 * the raw files the index does not know are indexed first (`reindexRaw`, once per such call in
 * a process), so the answer in them is found too.
 */
export async function landedAnswer(wh: Warehouse, requestHash: string, path?: string): Promise<LandedAnswer | undefined> {
  await wh.flushIndex();
  const find = async () =>
    (
      await wh.all<{ call_id: string; file: string }>(
        `SELECT call_id, file FROM raw_responses WHERE request_hash = $1 AND parsed AND http_status BETWEEN 200 AND 299
         ORDER BY received_at DESC, call_id LIMIT 1`,
        [requestHash],
      )
    )[0];
  let row = await find();
  if (!row && path !== undefined) {
    const seen = lookedFor.get(wh) ?? new Set<string>();
    lookedFor.set(wh, seen);
    const open = (
      await wh.all<{ c: string }>(`SELECT call_id AS c FROM ledger WHERE http_status IS NULL AND task_id IS NULL AND path = $1`, [path])
    ).filter((r) => !seen.has(r.c));
    if (open.length > 0) {
      open.forEach((r) => seen.add(r.c));
      await reindexRaw(wh);
      row = await find();
    }
  }
  if (!row) return undefined;
  try {
    const [line] = await wh.all<{
      http_status: number;
      request_id: string | null;
      charge_cny: string | null;
      cost_usd: string | null;
      balance_cny: string | null;
      body: string;
    }>(
      `SELECT http_status, request_id, charge_cny, cost_usd, balance_cny, coalesce(body_text, body::VARCHAR) AS body
       FROM read_json(${sqlString(join(wh.dir, row.file))}, columns = {
         call_id: 'VARCHAR', http_status: 'INTEGER', request_id: 'VARCHAR', charge_cny: 'VARCHAR', cost_usd: 'VARCHAR',
         balance_cny: 'VARCHAR', body: 'JSON', body_text: 'VARCHAR'
       }, format = 'newline_delimited')
       WHERE call_id = $1`,
      [row.call_id],
    );
    if (!line) return undefined;
    return {
      callId: row.call_id,
      httpStatus: line.http_status,
      charge: { requestId: line.request_id, chargeCny: line.charge_cny, costUsd: line.cost_usd, balanceCny: line.balance_cny },
      body: line.body,
    };
  } catch {
    return undefined;
  }
}
