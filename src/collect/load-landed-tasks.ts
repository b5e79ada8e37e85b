import { loadLanded, reindexRaw, runQueries, RunStore, type DamagedRawFile, type Warehouse } from '../warehouse/index.js';

/** What a load of landed task bodies did. */
export interface TaskLoad {
  collected: number;
  /**
   * Tasks handed over whose answer the raw index does not hold (none landed, or not parsed):
   * left posted, not marked collected with no rows, so that they are fetched again.
   */
  unloaded: string[];
  rowsLoaded: number;
  /** Tables that received rows, so only they need a new Parquet copy. */
  tables: Set<string>;
  /** Landed files DuckDB read short as gzip, loaded again from plain text (LoadReport.rereadPlain; rereadNote names each once). */
  rereadPlain: string[];
}

/** The run's note for landed files DuckDB read short and the load read again; '' for none. */
export function rereadNote(files: readonly string[]): string {
  const distinct = [...new Set(files)];
  if (distinct.length === 0) return '';
  return `${distinct.length} landed file(s) gave fewer rows read as gzip than their answers hold (first: ${distinct[0]}); they were loaded again from plain text and every row is in. If it happens again, keep the files: DuckDB's gzip reader has stopped early without an error before`;
}

/**
 * Why a load left tasks out (not in its `picked`), for the failure message of a task that cannot
 * be fetched again: the raw files DuckDB could not read, with its error, or `otherwise`.
 */
export function unloadedWhy(skipped: readonly { file: string; error: string }[], otherwise: string): string {
  return skipped.length > 0 ? `raw file(s) DuckDB could not read: ${skipped.map((f) => `${f.file} (${f.error})`).join('; ')}` : otherwise;
}

/** Tasks loaded together: one transaction, one read of their files. */
const CHUNK = 500;

/**
 * Loads the rows of tasks whose bodies are landed and indexed, and marks them collected,
 * in one transaction per chunk (loads are idempotent: a task's old rows are replaced).
 */
export async function loadTasks(wh: Warehouse, runId: string, taskIds: readonly string[], at: Date): Promise<TaskLoad> {
  const out: TaskLoad = { collected: 0, unloaded: [], rowsLoaded: 0, tables: new Set(), rereadPlain: [] };
  for (let i = 0; i < taskIds.length; i += CHUNK) {
    const ids = taskIds.slice(i, i + CHUNK);
    let marked: string[] = [];
    const report = await loadLanded(wh, { taskIds: ids }, async (r) => {
      // Only a task whose answer this load read is collected: one marked collected without its
      // answer would never be fetched again, a paid result lost.
      marked = ids.filter((id) => r.picked.has(id));
      await new RunStore(wh, runId).markCollected(new Map(marked.map((id) => [id, r.perTask.get(id) ?? 0])), at);
    });
    for (const [table, n] of report.rows) {
      out.rowsLoaded += n;
      if (n > 0) out.tables.add(table);
    }
    out.collected += marked.length;
    out.unloaded.push(...ids.filter((id) => !report.picked.has(id)));
    out.rereadPlain.push(...report.rereadPlain);
  }
  return out;
}

/**
 * Loads what a run already holds but never loaded: callbacks acknowledged (landed) just
 * before a crash, or fetches that died before their load. Raw files the index does not
 * know yet (a landed callback is indexed after its answer) are indexed first. Costs no
 * call, so it runs before any sweep fetches tasks again.
 */
export async function loadLandedLeftovers(
  wh: Warehouse,
  runId: string,
  at: Date,
): Promise<TaskLoad & { error?: string; damaged: DamagedRawFile[] }> {
  let error: string | undefined;
  // A damaged file among them is kept apart, what can be read of it indexed (setAsideDamaged): its tasks are fetched again.
  const damaged: DamagedRawFile[] = [];
  try {
    await reindexRaw(wh, undefined, { damaged, at });
  } catch (err) {
    // An unreadable raw file must not stop the run: its tasks are fetched again instead.
    error = `some raw files could not be indexed (${(err as Error).message.split('\n')[0]}); their tasks are fetched again`;
  }
  const answered = await runQueries.postedWithLandedAnswer(wh, runId);
  const load = await loadTasks(wh, runId, answered, at);
  return error ? { ...load, error, damaged } : { ...load, damaged };
}
