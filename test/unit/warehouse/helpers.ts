import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RawResponse } from '../../../src/client/index.js';
import { RawLanding, Warehouse } from '../../../src/warehouse/index.js';

/** A fresh warehouse in a temp folder; `done()` closes and removes it. */
export async function tempWarehouse(): Promise<{ wh: Warehouse; dir: string; done: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'wh-'));
  const wh = await Warehouse.open(dir);
  return { wh, dir, done: async () => { wh.close(); await rm(dir, { recursive: true, force: true }); } };
}

/** The text of a fixture under test/fixtures. */
export function fixture(name: string): Promise<string> {
  return readFile(new URL(`../../fixtures/${name}`, import.meta.url), 'utf8');
}

/** A response as the client hands it to the landing, with a body and a path. */
export function response(path: string, body: string, o: Partial<RawResponse> = {}): RawResponse {
  return {
    callId: randomUUID(),
    receivedAt: new Date('2026-11-20T09:00:00Z'),
    method: 'GET',
    path,
    endpointId: 'test',
    httpStatus: 200,
    charge: { requestId: 'req-1', chargeCny: '0', costUsd: '0', balanceCny: null },
    tasksSent: 0,
    body,
    ...o,
  };
}

/** Lands bodies through the real landing (files, index, ledger) and returns their call ids. */
export async function land(wh: Warehouse, ...responses: RawResponse[]): Promise<string[]> {
  const landing = new RawLanding(wh, { runId: 'run-1', pipeline: 'test' });
  for (const r of responses) await landing.land(r);
  return responses.map((r) => r.callId);
}

/** Compact JSON of a fixture, as the service sends it. */
export async function compactFixture(name: string): Promise<string> {
  return JSON.stringify(JSON.parse(await fixture(name)));
}

/** Cuts the last 20 bytes off the raw file holding the call (`dir`: the warehouse folder): a torn gzip. Returns the file, as the index names it. */
export async function tearRawFile(wh: Warehouse, dir: string, callId: string): Promise<string> {
  const [{ file }] = (await wh.all<{ file: string }>(`SELECT file FROM raw_responses WHERE call_id = $1`, [callId])) as [{ file: string }];
  const bytes = await readFile(join(dir, file));
  await writeFile(join(dir, file), bytes.subarray(0, bytes.length - 20));
  return file;
}
