import { randomUUID } from 'node:crypto';
import { mkdir, open, rename } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { RawResponse } from '../client/index.js';
import type { Warehouse } from './warehouse.js';

export interface LandingContext {
  runId: string;
  pipeline: string;
}

/**
 * Lands one response durably before anything parses it: a gzip NDJSON file under
 * `raw/<date>/` (one JSON line: call metadata plus the body as received, as a string so
 * even a malformed body is kept), fsynced and renamed into place, then indexed in
 * `raw_responses` with its `ledger` row in the same transaction.
 */
export class RawLanding {
  private seq = 0;

  constructor(
    private readonly wh: Warehouse,
    private readonly ctx: LandingContext,
  ) {}

  /** The `Lander` the client calls. */
  readonly land = async (raw: RawResponse): Promise<void> => {
    const day = raw.receivedAt.toISOString().slice(0, 10);
    const n = String(++this.seq).padStart(6, '0');
    const file = join(this.wh.rawDir, day, `${this.ctx.runId}-${n}.ndjson.gz`);
    const line = JSON.stringify({
      call_id: raw.callId,
      run_id: this.ctx.runId,
      pipeline: this.ctx.pipeline,
      received_at: raw.receivedAt.toISOString(),
      method: raw.method,
      path: raw.path,
      endpoint_id: raw.endpointId,
      http_status: raw.httpStatus,
      request_id: raw.charge.requestId,
      charge_cny: raw.charge.chargeCny,
      cost_usd: raw.charge.costUsd,
      balance_cny: raw.charge.balanceCny,
      tasks_sent: raw.tasksSent,
      body: raw.body,
    });
    const gz = gzipSync(line + '\n');
    await writeDurably(file, gz);
    const rel = relative(this.wh.dir, file);
    const at = raw.receivedAt.toISOString();
    await this.wh.transaction(async () => {
      await this.wh.run(
        `INSERT INTO raw_responses VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::TIMESTAMPTZ)`,
        [raw.callId, this.ctx.runId, raw.endpointId, raw.path, raw.httpStatus, raw.charge.requestId, rel, BigInt(gz.length), at],
      );
      await this.wh.run(
        `INSERT INTO ledger VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
           $9::DECIMAL(18,6), $10::DECIMAL(18,6), $11::DECIMAL(18,6), $12, $13::TIMESTAMPTZ)`,
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
          raw.charge.costUsd,
          raw.charge.balanceCny,
          raw.tasksSent,
          at,
        ],
      );
    });
  };
}

async function writeDurably(file: string, data: Uint8Array): Promise<void> {
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
