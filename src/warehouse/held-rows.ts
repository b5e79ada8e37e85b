import type { Warehouse } from './warehouse.js';

/**
 * Rows committed since the last checkpoint that DuckDB may hold in memory before a run's loads
 * checkpoint them, in MB, unless `PIPELINE_CHECKPOINT_MB` says otherwise (0: never before the
 * run's own checkpoint step). The warehouse checkpoints once a run (CHECKPOINT_THRESHOLD), and
 * until then DuckDB keeps those rows uncompressed in memory: about 20 KB a depth-10 SERP task,
 * mostly its items and its raw index row, so a night of 100,000 tasks would hold about 2 GB.
 * A night of 1,000 keywords at depth 100 stays under this bound and still checkpoints once.
 */
export const DEFAULT_CHECKPOINT_MB = 256;

/** The bound in bytes, from `PIPELINE_CHECKPOINT_MB` or the default; 0 turns it off. */
export function heldRowsBound(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PIPELINE_CHECKPOINT_MB;
  const mb = raw === undefined || raw.trim() === '' ? DEFAULT_CHECKPOINT_MB : Number(raw);
  if (!Number.isFinite(mb) || mb < 0) throw new Error(`PIPELINE_CHECKPOINT_MB must be a number of MB (0 or more), not '${raw}'`);
  return mb * 1048576;
}

/** Bytes of rows committed since the last checkpoint that DuckDB holds in memory (`duckdb_memory()`, IN_MEMORY_TABLE). */
export async function heldRowsBytes(wh: Warehouse): Promise<number> {
  const [r] = await wh.all<{ bytes: bigint | null }>(`SELECT sum(memory_usage_bytes) AS bytes FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'`);
  return Number(r?.bytes ?? 0);
}

/**
 * Checkpoints when DuckDB holds more than `bound` bytes of rows committed since the last
 * checkpoint: they are written compressed into the database file and their memory is let go,
 * so a large night's memory stays near this bound instead of growing with every task loaded.
 * Called between loads, on the loader's connection; the run's other connections go on, their
 * commits waiting while it runs (as at any checkpoint). Returns whether it checkpointed.
 */
export async function checkpointIfHeld(wh: Warehouse, bound: number): Promise<boolean> {
  if (bound <= 0 || (await heldRowsBytes(wh)) <= bound) return false;
  await wh.checkpoint();
  return true;
}
