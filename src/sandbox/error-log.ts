import { dashedServiceDate } from './data/result-input.js';
import { WINDOWS } from './spec/index.js';

/** One row of `{api}/errors` (spec, Error record); `datetime` is `yyyy-mm-dd hh-mm-ss +00:00`, dashes as the spec writes it. */
export interface ErrorRecord {
  id: string;
  datetime: string;
  function: string;
  error_code: number;
  error_message: string;
  http_url: string;
  http_method: string;
  http_code: number;
  http_time: number;
  http_response: string;
}

interface Row {
  key: string;
  api: string;
  atMs: number;
  record: ErrorRecord;
}

/** Errors are listed for this long (spec/limits.ts: look-back 7 days). */
export const ERRORS_WINDOW_MS = WINDOWS.errorsLookBackMs;

/**
 * Failed callbacks and failed tasks, per key and `{api}`, as the `errors` endpoints list
 * them. Rows older than 7 days on the emulator clock are never listed.
 */
export class ErrorLog {
  readonly #rows: Row[] = [];

  add(key: string, api: string, at: Date, record: Omit<ErrorRecord, 'datetime'>): void {
    this.#rows.push({ key, api, atMs: at.getTime(), record: { ...record, datetime: dashedServiceDate(at) } });
  }

  /** Rows of one key and api within [fromMs, toMs], newest first, optionally of one function. */
  query(key: string, api: string, fromMs: number, toMs: number, fn?: string): ErrorRecord[] {
    return this.#rows
      .filter((r) => r.key === key && r.api === api && r.atMs >= fromMs && r.atMs <= toMs && (fn === undefined || r.record.function === fn))
      .sort((a, b) => b.atMs - a.atMs)
      .map((r) => r.record);
  }
}
