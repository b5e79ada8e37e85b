export interface LoadReport {
  /** Rows inserted per table. */
  rows: Map<string, number>;
  /** Rows inserted per task id (all tables), for the tasks table's `rows_loaded`. */
  perTask: Map<string, number>;
  /** Raw files DuckDB could not read: reported and skipped, the others load. */
  skippedFiles: { file: string; error: string }[];
  /** Responses whose body was not JSON (kept raw, nothing to load). */
  unparsed: string[];
  /** Columns and tables this load added. */
  added: { table: string; column: string; kind: string }[];
  /**
   * For a selection by task ids: the ids with a landed, parsed answer to load (the rest have
   * none indexed: their rows cannot be in this load, and they must not be marked collected),
   * each with the call its rows come from (its newest answer that loaded): a caller that fetched
   * a task again can tell whether this fetch's answer is the one loaded, or an older one because
   * the new one's file could not be read.
   */
  picked: Map<string, string>;
  /**
   * Landed files DuckDB's gzip reader read short (an answer that holds rows gave none, and no
   * error, as in 0e6f089): the load was rolled back and done again from plain text.
   */
  rereadPlain: string[];
}

/** Forgets what a rolled-back attempt had counted. */
export function forget(report: LoadReport): void {
  report.rows.clear();
  report.perTask.clear();
  report.added.length = 0;
}
