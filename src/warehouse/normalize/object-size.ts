/**
 * Landed answers larger than DuckDB's JSON reader takes by default. `read_json` refuses a line
 * longer than its `maximum_object_size` (16 MiB by default; a line up to about twice that is
 * read, as the reader's buffer is), and reserves twice the setting for each reading thread,
 * counted against the memory limit. Raised for every read, a setting for the largest answer
 * would cost that much on every load (512 MiB a thread for 256 MiB); so a file is read with a
 * larger setting only after DuckDB refused it, and only as large as its longest line needs.
 */

/** DuckDB's error for a line longer than `maximum_object_size`. */
export const OBJECT_TOO_LARGE = /"maximum_object_size" of \d+ bytes exceeded/;

/** DuckDB's default `maximum_object_size`. */
const DEFAULT_OBJECT_BYTES = 16 << 20;

/** The longest line the load reads: 1 GiB (a client answer is capped at PIPELINE_MAX_RESPONSE_MB, 256 by default). */
export const MAX_OBJECT_BYTES = 1 << 30;

/**
 * The `maximum_object_size` to read lines of up to `longest` bytes (rounded up to a MiB), or
 * undefined past MAX_OBJECT_BYTES.
 */
export function objectSizeFor(longest: number): number | undefined {
  if (longest > MAX_OBJECT_BYTES) return undefined;
  return Math.max(DEFAULT_OBJECT_BYTES, Math.ceil((longest + 1) / (1 << 20)) * (1 << 20));
}

/** The `read_json` option for `bytes`, or nothing for DuckDB's default. */
export function objectSizeOption(bytes: number | undefined): string {
  return bytes ? `, maximum_object_size = ${bytes}` : '';
}
