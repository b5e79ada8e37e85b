import { chmod } from 'node:fs/promises';
import { makeDirs } from '../paths.js';

/** Mode of every file the warehouse writes: the owner's alone (raw bodies, the database, the journal). */
export const FILE_MODE = 0o600;
/** Mode of every folder of the warehouse: nobody else may list or enter it. */
export const DIR_MODE = 0o700;

/**
 * Makes `dir` (and missing parents) and sets it owner-only whatever the umask: a mode
 * given to mkdir is only ever narrowed by the umask, and an existing folder keeps its
 * mode, so the chmod is what holds. Raw bodies and the ledger are the user's data and
 * may name hosts and callback URLs; a folder 0700 also covers files that DuckDB creates
 * itself (its WAL, Parquet copies, spill files) with the process umask.
 */
export async function ownerOnlyDir(dir: string): Promise<void> {
  // Not mkdir's `recursive`: it spins forever where a folder cannot be made (/proc/1/x).
  await makeDirs(dir, DIR_MODE);
  await chmod(dir, DIR_MODE);
}

/** Sets an existing file owner-only; a missing one is fine. */
export async function ownerOnlyFile(file: string): Promise<void> {
  try {
    await chmod(file, FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
