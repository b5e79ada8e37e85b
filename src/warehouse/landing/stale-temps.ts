import { readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { TEMPS_IN_FLIGHT } from './write-durably.js';

/** A temp file of writeDurably: `<file>.<8 hex>.tmp` beside the raw file it was to become. */
const TEMP = /\.ndjson\.gz\.[0-9a-f]{8}\.tmp$/;

/**
 * When raw/ was last cleaned (its mtime: when that cleaning started), beside raw/ rather than
 * in it, which holds day folders alone. A day folder not changed since holds no new temp file
 * (making one changes its folder's mtime), so it is not listed again: a year of raw files is
 * tens of thousands of names, too many to list at every open; the folders' times are few.
 */
const CHECKED = '.raw-temps-checked';

/** Room for file systems whose times are coarse (some keep seconds, or 2 s on FAT). */
const SLACK_MS = 5_000;

/**
 * Removes the temp files a killed process left under `raw/` (a SIGKILL while landing a body or
 * compacting a day): called by Warehouse.open once it holds `warehouse.duckdb`, so no other
 * process is writing there; this process's own writes under way (TEMPS_IN_FLIGHT) are left.
 * Only names writeDurably makes are touched, in `raw/` and its day folders (`raw/<day>/`).
 * Returns the files removed.
 */
export async function removeStaleTemps(warehouseDir: string): Promise<string[]> {
  const raw = join(resolve(warehouseDir), 'raw');
  const started = new Date();
  const mark = join(resolve(warehouseDir), CHECKED);
  const since = await stat(mark).then(
    (s) => s.mtimeMs - SLACK_MS,
    () => Number.NEGATIVE_INFINITY,
  );
  const removed: string[] = [];
  const clean = async (dir: string, names: readonly string[]) => {
    for (const name of names) {
      const path = join(dir, name);
      if (!TEMP.test(name) || TEMPS_IN_FLIGHT.has(path)) continue;
      await rm(path, { force: true });
      removed.push(path);
    }
  };
  const top = await readdir(raw, { withFileTypes: true }).catch(() => []);
  await clean(
    raw,
    top.filter((e) => e.isFile()).map((e) => e.name),
  );
  const days = top.filter((e) => e.isDirectory()).map((e) => join(raw, e.name));
  const changed = await Promise.all(days.map(async (day) => (await stat(day)).mtimeMs >= since));
  for (const [i, day] of days.entries()) if (changed[i]) await clean(day, await readdir(day));
  if (top.length > 0) {
    await writeFile(mark, '', { mode: 0o600 });
    await utimes(mark, started, started);
  }
  return removed;
}
