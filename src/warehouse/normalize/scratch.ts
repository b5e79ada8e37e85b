import { createHash, randomUUID } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, statSync } from 'node:fs';
import { freemem } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * Where a load's pieces (intoPieces) are written: in memory when the system has a memory file
 * system with room, else in the warehouse's own scratch folder (`<warehouse>/tmp`).
 *
 * A piece lives for one insert: cut from the landed files, read once by DuckDB, removed. Creating
 * files on a disk is not free everywhere: on an ext4 without a journal (this project's measuring
 * machine), each file created in the minutes after many deletions costs the kernel a scan past the
 * recently deleted inodes. 464 pieces (a night of a million SERP items) took 94 ms of system CPU on
 * a quiet disk and 390 to 470 ms after 20,000 files were removed; on /dev/shm 25 to 27 ms either
 * way (docs/warehouse.md, "Scratch pieces in memory"). A memory file system's pages are not the
 * process's RSS: they are the machine's memory all the same, held for the batch's insert
 * (at most a load batch of gzip, LOAD_BATCH_BYTES).
 *
 * PIPELINE_LOAD_SCRATCH: `auto` (the default: /dev/shm when it is a tmpfs), `disk` (always the
 * warehouse's folder), or a folder to use instead of /dev/shm (any file system).
 */

/** The folder of a warehouse's load scratch files (`<warehouse>/tmp`). */
export function scratchDir(warehouseDir: string): string {
  return join(warehouseDir, 'tmp');
}

/** A new scratch file name for a load: `<warehouse>/tmp/load-<pid>-<random>.ndjson`. */
export function scratchFile(warehouseDir: string): string {
  return join(scratchDir(warehouseDir), `load-${process.pid}-${randomUUID().slice(0, 8)}.ndjson`);
}

/** statfs type of a tmpfs (Linux's TMPFS_MAGIC). */
const TMPFS_MAGIC = 0x01021994;

/** A batch goes to memory only when that leaves this many times its size free, in the file system and in the machine. */
const ROOM_FACTOR = 4;

/** This user's folder of pieces in memory (`<root>/pipeline-scratch-<uid>`); undefined for the disk. */
function userFolder(): string | undefined {
  const root = memoryRoot();
  const uid = process.getuid?.();
  return root && uid !== undefined ? join(root, `pipeline-scratch-${uid}`) : undefined;
}

/** `dir`, made owner-only when missing; undefined when it cannot be trusted. */
function ownFolder(dir: string): string | undefined {
  const uid = process.getuid?.();
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Another user's folder, a link, or one others can write into: not a place for raw bodies.
    const st = lstatSync(dir);
    if (uid === undefined || !st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** The root of memory scratch as PIPELINE_LOAD_SCRATCH sets it; undefined for the disk. */
function memoryRoot(): string | undefined {
  const setting = process.env.PIPELINE_LOAD_SCRATCH?.trim() || 'auto';
  if (setting === 'disk') return undefined;
  if (setting !== 'auto') return resolve(setting);
  try {
    return statfsSync('/dev/shm').type === TMPFS_MAGIC ? '/dev/shm' : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes the machine can still give without swapping: MemAvailable where Linux tells it, else the free memory. */
function availableMemory(): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // Not Linux: the free memory below.
  }
  return freemem();
}

/** This warehouse's mark in the names of its pieces in memory (several warehouses may load at once). */
function warehouseMark(warehouseDir: string): string {
  return createHash('sha256').update(resolve(warehouseDir)).digest('hex').slice(0, 12);
}

/**
 * Names of new pieces in memory for `bytes` of pieces of the warehouse in `warehouseDir`;
 * undefined when they go to the disk (PIPELINE_LOAD_SCRATCH=disk, no memory file system, or not
 * ROOM_FACTOR times their size free in it and in the machine).
 */
export function memoryScratch(warehouseDir: string, bytes: number): (() => string) | undefined {
  const folder = userFolder();
  if (!folder) return undefined;
  try {
    const fs = statfsSync(join(folder, '..'));
    if (fs.bavail * fs.bsize < ROOM_FACTOR * bytes || availableMemory() < ROOM_FACTOR * bytes) return undefined;
  } catch {
    return undefined;
  }
  const dir = ownFolder(folder);
  if (!dir) return undefined;
  const prefix = join(dir, `load-${process.pid}-${warehouseMark(warehouseDir)}-`);
  return () => `${prefix}${randomUUID().slice(0, 8)}.ndjson.gz`;
}

/** The pieces in memory of the warehouse in `warehouseDir` (a load removes its own; for checks). */
export function memoryPiecesOf(warehouseDir: string): string[] {
  const dir = userFolder();
  if (!dir) return [];
  const mark = `-${warehouseMark(warehouseDir)}-`;
  try {
    return readdirSync(dir)
      .filter((n) => n.startsWith('load-') && n.includes(mark))
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/**
 * A piece in memory of another warehouse, left by a process that is gone, is removed once it is
 * this old (ms). The folder is shared by the user's processes, and a process in another pid
 * namespace (a container sharing /dev/shm) looks gone from here while its load runs; a piece lives
 * for one insert, seconds to minutes.
 */
const OTHERS_LEFT_MS = 60 * 60 * 1000;

/** Whether the scratch file named `name` (`load-<pid>-...`) was left by a process that is gone (killed mid-load). */
export function leftByGone(name: string): boolean {
  const pid = Number(/^load-(\d+)-/.exec(name)?.[1] ?? Number.NaN);
  if (!Number.isInteger(pid)) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/**
 * Removes pieces in memory left by loads whose process is gone (killed mid-load): the
 * warehouse's own at once (no other process loads it: DuckDB's lock), other warehouses' after
 * OTHERS_LEFT_MS.
 */
export function clearMemoryScratch(warehouseDir: string): void {
  const dir = userFolder();
  if (!dir) return;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const mark = `-${warehouseMark(warehouseDir)}-`;
  for (const n of names) {
    if (!leftByGone(n)) continue;
    const file = join(dir, n);
    try {
      if (n.includes(mark) || Date.now() - statSync(file).mtimeMs > OTHERS_LEFT_MS) rmSync(file, { force: true });
    } catch {
      // Gone meanwhile, or removed by another process: nothing to do.
    }
  }
}
