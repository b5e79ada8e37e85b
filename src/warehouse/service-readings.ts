import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * What `pipeline doctor --probe` found the real service to do where the spec allows more than
 * one reading (the emulator's list of such points is src/sandbox/readings.ts). Kept beside the
 * DuckDB file as `service-readings.json` and read through {@link readServiceReadings} only, so
 * a run (and the client it builds) can follow the service instead of a guess. Never holds the key.
 */
export const SERVICE_READINGS_FILE = 'service-readings.json';

/** One point: the reading found, or `unknown` / `not-probed` with why (`detail`). */
export interface ServiceReading<T> {
  value: T | 'unknown' | 'not-probed';
  detail: string;
}

export interface ServiceReadingsRecord {
  version: 1;
  /** When the probe ran (ISO, our clock). */
  probedAt: string;
  /** The account's login from `user_data` (null when it sent none); never the key. */
  account: string | null;
  /** The service address probed. */
  baseUrl: string;
  /** What the probe was charged in all (sum of `X-Svc-Charge-CNY`), CNY. */
  chargedCny: string;
  /** CNY of a SERP task of the first 10 results, from the probe's charge (the next probe's plan is priced with it). */
  serpTaskCny: number | null;
  readings: {
    /** How a refund of unused depth shows: in the task's `cost` after completion, only in the balance, or not seen. */
    refunds: ServiceReading<'task-cost' | 'balance' | 'none-seen'>;
    /** The body of a rate-limit refusal (not probed: it needs exceeding a limit). */
    rateLimitBody: ServiceReading<'http429' | 'http200'>;
    /** The service's clock minus ours, seconds (from its `Date` header): id_list and errors bounds need it. */
    clockSkewSeconds: ServiceReading<number>;
    /** Tasks one asynchronous task_post POST takes: 1 (the second got 40006) or 100 (the second was created). */
    asyncTasksPerPost: ServiceReading<1 | 100>;
    /** Tasks one tasks_ready answer lists at most (a lower bound when the list was shorter than a page). */
    readyListPaging: ServiceReading<number>;
    /** Status code of a `.ai` task_get of a done task (`status_code` at the top of the `.ai` body). */
    aiCodes: ServiceReading<number>;
  };
}

/** The readings last recorded in a warehouse folder, or null when no probe ran there. */
export async function readServiceReadings(warehouseDir: string): Promise<ServiceReadingsRecord | null> {
  let text: string;
  try {
    text = await readFile(join(warehouseDir, SERVICE_READINGS_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const r = JSON.parse(text) as ServiceReadingsRecord;
  if (r.version !== 1 || typeof r.readings !== 'object') throw new Error(`${SERVICE_READINGS_FILE}: not a version 1 record`);
  return r;
}

/** Replaces the record whole (written aside, then renamed, so a reader never sees half of it). */
export async function writeServiceReadings(warehouseDir: string, record: ServiceReadingsRecord): Promise<string> {
  const path = join(warehouseDir, SERVICE_READINGS_FILE);
  await writeFile(`${path}.tmp`, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
  return path;
}
