import { randomUUID } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { FILE_MODE, ownerOnlyDir } from '../owner-only.js';

/** Temp files of writeDurably this process is writing now: a warehouse opened meanwhile leaves them (stale-temps.ts). */
export const TEMPS_IN_FLIGHT = new Set<string>();

/** Writes a file so that it is either absent or whole: temp file, fsync, rename. */
export async function writeDurably(file: string, data: Uint8Array): Promise<void> {
  const tmp = `${file}.${randomUUID().slice(0, 8)}.tmp`;
  TEMPS_IN_FLIGHT.add(resolve(tmp));
  try {
    await writeTemp(file, tmp, data);
  } catch (err) {
    // A write that failed (a full disk, a rename refused) leaves no temp behind to fill the disk further.
    await rm(tmp, { force: true }).catch(() => {});
    throw err;
  } finally {
    TEMPS_IN_FLIGHT.delete(resolve(tmp));
  }
}

async function writeTemp(file: string, tmp: string, data: Uint8Array): Promise<void> {
  let fh;
  try {
    fh = await open(tmp, 'wx', FILE_MODE);
  } catch (err) {
    // The day's folder is made on its first file, not before every write.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await ownerOnlyDir(dirname(file));
    fh = await open(tmp, 'wx', FILE_MODE);
  }
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
}
