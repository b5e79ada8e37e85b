import { readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { TEMPS_IN_FLIGHT } from './raw-landing.js';

/** A temp file of writeDurably: `<file>.<8 hex>.tmp` beside the raw file it was to become. */
const TEMP = /\.ndjson\.gz\.[0-9a-f]{8}\.tmp$/;

/**
 * Removes the temp files a killed process left under `raw/` (a SIGKILL while landing a body or
 * compacting a day): called by Warehouse.open once it holds `warehouse.duckdb`, so no other
 * process is writing there; this process's own writes under way (TEMPS_IN_FLIGHT) are left.
 * Only names writeDurably makes are touched. Returns the files removed.
 */
export async function removeStaleTemps(warehouseDir: string): Promise<string[]> {
  const raw = join(resolve(warehouseDir), 'raw');
  const removed: string[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory() && depth < 3) await visit(path, depth + 1);
      else if (e.isFile() && TEMP.test(e.name) && !TEMPS_IN_FLIGHT.has(path)) {
        await rm(path, { force: true });
        removed.push(path);
      }
    }
  };
  await visit(raw, 0);
  return removed;
}
