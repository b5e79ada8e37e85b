import type { Warehouse } from './warehouse.js';

/**
 * Rows committed since the last checkpoint that DuckDB may hold in memory before a run's loads
 * checkpoint them, in MB, unless `PIPELINE_CHECKPOINT_MB` says otherwise (0: never before the
 * run's own checkpoint step). The warehouse checkpoints once a run (CHECKPOINT_THRESHOLD), and
 * until then DuckDB keeps those rows uncompressed in memory: about 20 KB a depth-10 SERP task,
 * mostly its items and its raw index row, so a night of 100,000 tasks would hold about 2 GB.
 * A checkpoint takes about as much again as the rows it writes while it runs, so the bound sets
 * the ingest's peak: an agency's night (bench/agency-night.ts, 100,000 tasks) peaked while
 * posting at 1,196 to 1,563 MB in six runs at 256 MB, at 1,179 and 1,227 in two at 128, for the
 * same CPU (docs/warehouse.md, "Checkpoints"). A night of 1,000 keywords at depth 100 (about
 * 200 MB of rows) checkpoints once before the run's own checkpoint.
 */
export const DEFAULT_CHECKPOINT_MB = 128;

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
 * DuckDB refuses a `CHECKPOINT` while another connection's transaction holds an uncommitted
 * update ("Cannot CHECKPOINT: there are other write transactions active"): in a night of
 * postbacks the post step marks tasks posted all the time, and about half the loader's
 * checkpoints were refused, so the rows held grew to three times the bound before one went
 * through. A refused checkpoint is tried again after these pauses (ms). `FORCE CHECKPOINT` would
 * wait for those transactions instead, and hold every other writer meanwhile.
 */
const CHECKPOINT_RETRY_MS = [50, 150, 400];

/** After a checkpoint, the cached table blocks are dropped unless fewer than this, leaving this room meanwhile (Warehouse.dropCachedBlocks). */
const DROP_CACHED = { unlessBelow: 64 * 1048576, headroomBytes: 64 * 1048576 };

/**
 * Checkpoints when DuckDB holds more than `bound` bytes of rows committed since the last
 * checkpoint: they are written compressed into the database file and their memory is let go,
 * so a large night's memory stays near this bound instead of growing with every task loaded.
 * A checkpoint DuckDB refused is tried again (CHECKPOINT_RETRY_MS; the last refusal is thrown);
 * one that wrote them is followed by dropping the table blocks DuckDB keeps cached, which would otherwise
 * grow by what each checkpoint wrote. Called between loads, on the loader's connection; the run's
 * other connections go on, their commits waiting while it runs (as at any checkpoint). Returns
 * whether it checkpointed.
 */
export async function checkpointIfHeld(wh: Warehouse, bound: number, drop: Parameters<Warehouse['dropCachedBlocks']>[0] = DROP_CACHED): Promise<boolean> {
  if (bound <= 0) return false;
  if ((await heldRowsBytes(wh)) <= bound) return false;
  for (let attempt = 0; ; attempt++) {
    try {
      await wh.checkpoint();
      break;
    } catch (err) {
      if (!REFUSED.test((err as Error).message) || attempt >= CHECKPOINT_RETRY_MS.length) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_RETRY_MS[attempt]));
  }
  await wh.dropCachedBlocks(drop);
  return true;
}

const REFUSED = /Cannot CHECKPOINT: there are other (write )?transactions/;
