import { randomUUID } from 'node:crypto';
import { mkdir, open, rename } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { RawResponse } from '../client/index.js';
import { CALLS_KIND, kindOfPath } from './kinds/index.js';

/** Kind of a body that is not JSON: landed as received, reported, never loaded. */
export const MALFORMED_KIND = '_malformed';
import { shapeOf } from './shape.js';
import type { Warehouse } from './warehouse.js';

export interface LandingContext {
  runId: string;
  pipeline: string;
}

/** One landed response: the NDJSON line and what the raw index keeps of it. */
export interface LandedLine {
  line: string;
  kind: string;
  parsed: boolean;
  taskIds: string[];
  shape: string[];
  refundCny: string;
}

/**
 * The landed line of a response. A JSON body goes in `body` as JSON (not as a string), so
 * DuckDB reads it with explicit column types at full speed; when re-serializing it would
 * not give back the exact bytes received (pretty-printing, a number JSON cannot hold), the
 * bytes are also kept verbatim in `body_text`. A body that is not JSON is kept as a string
 * in `body`, under the kind `_malformed`, so it never breaks a typed read. The exact bytes
 * are always recoverable: `body_text`, else `body` if it is a string, else
 * `JSON.stringify(body)`.
 */
export function landedLine(raw: RawResponse, ctx: LandingContext): LandedLine {
  let parsed: unknown;
  let ok = true;
  try {
    parsed = JSON.parse(raw.body);
  } catch {
    ok = false;
  }
  const text = ok ? JSON.stringify(parsed) : null;
  const exact = text === raw.body;
  const kind = ok ? kindOfPath(raw.path) : MALFORMED_KIND;
  const refund = raw.charge.chargeCny?.startsWith('-') ? raw.charge.chargeCny.slice(1) : '0';
  const meta = {
    call_id: raw.callId,
    run_id: ctx.runId,
    pipeline: ctx.pipeline,
    received_at: raw.receivedAt.toISOString(),
    method: raw.method,
    path: raw.path,
    endpoint_id: raw.endpointId,
    kind,
    http_status: raw.httpStatus,
    request_id: raw.charge.requestId,
    charge_cny: raw.charge.chargeCny,
    cost_usd: raw.charge.costUsd,
    balance_cny: raw.charge.balanceCny,
    refund_cny: refund,
    tasks_sent: raw.tasksSent,
    parsed: ok,
  };
  const shape = ok && kind !== CALLS_KIND ? shapeOf(parsed) : [];
  const head = JSON.stringify(meta).slice(0, -1);
  const body = ok ? text : JSON.stringify(raw.body);
  const line = `${head},"shape":${JSON.stringify(shape)},"body":${body}${ok && !exact ? `,"body_text":${JSON.stringify(raw.body)}` : ''}}`;
  return { line, kind, parsed: ok, taskIds: ok ? okTaskIds(parsed) : [], shape, refundCny: refund };
}

function okTaskIds(body: unknown): string[] {
  const tasks = (body as { tasks?: unknown } | null)?.tasks;
  if (!Array.isArray(tasks)) return [];
  const ids: string[] = [];
  for (const t of tasks as { id?: unknown; status_code?: unknown; result?: unknown }[]) {
    if (t && typeof t.id === 'string' && t.status_code === 20000 && Array.isArray(t.result)) ids.push(t.id);
  }
  return ids;
}

/**
 * Lands one response durably before anything parses it for use: one gzip NDJSON file
 * `raw/<date>/<kind>--<run>-<n>-<call>.ndjson.gz` (fsynced, renamed into place), then
 * indexed in `raw_responses` with its `ledger` row in one transaction. The kind leads the
 * name, so the files of one kind (bodies of one shape family) are read together with one
 * explicit schema.
 */
export class RawLanding {
  private seq = 0;

  constructor(
    private readonly wh: Warehouse,
    private readonly ctx: LandingContext,
  ) {}

  /** The `Lander` the client calls. */
  readonly land = async (raw: RawResponse): Promise<void> => {
    const landed = landedLine(raw, this.ctx);
    const day = raw.receivedAt.toISOString().slice(0, 10);
    const n = String(++this.seq).padStart(6, '0');
    const file = join(this.wh.rawDir, day, `${landed.kind}--${this.ctx.runId}-${n}-${raw.callId.slice(0, 8)}.ndjson.gz`);
    const gz = gzipSync(landed.line + '\n');
    await writeDurably(file, gz);
    const rel = relative(this.wh.dir, file);
    const at = raw.receivedAt.toISOString();
    await this.wh.transaction(async () => {
      await this.wh.run(
        `INSERT INTO raw_responses VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::TIMESTAMPTZ, $10, $11, $12::JSON::VARCHAR[], $13::JSON::VARCHAR[], 0)`,
        [raw.callId, this.ctx.runId, raw.endpointId, raw.path, raw.httpStatus, raw.charge.requestId, rel, BigInt(gz.length), at,
          landed.kind, landed.parsed, JSON.stringify(landed.taskIds), JSON.stringify(landed.shape)],
      );
      await this.wh.run(
        `INSERT INTO ledger VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
           $9::DECIMAL(18,6), $10::DECIMAL(18,6), $11::DECIMAL(18,6), $12, $13::DECIMAL(18,6), $14::TIMESTAMPTZ)`,
        [
          raw.callId,
          this.ctx.runId,
          this.ctx.pipeline,
          raw.endpointId,
          raw.method,
          raw.path,
          raw.httpStatus,
          raw.charge.requestId,
          raw.charge.chargeCny,
          landed.refundCny,
          raw.charge.costUsd,
          raw.charge.balanceCny,
          raw.tasksSent,
          at,
        ],
      );
    });
  };
}

/** Writes a file so that it is either absent or whole: temp file, fsync, rename. */
export async function writeDurably(file: string, data: Uint8Array): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${randomUUID().slice(0, 8)}.tmp`;
  const fh = await open(tmp, 'wx');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
}
