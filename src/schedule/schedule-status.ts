import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ConfigIssue } from '../errors.js';
import { makeDirs } from '../paths.js';

/** How often the scheduler writes its status file: each minute's tick. */
export const HEARTBEAT_MS = 60_000;

/**
 * What a running scheduler says of itself, rewritten at each tick (and when a run ends) to
 * `warehouse/schedule/status.json`: read by `pipeline schedule --status` without the
 * warehouse's lock, while the scheduler runs.
 */
export interface ScheduleStatus {
  pid: number;
  startedAt: string;
  /** The last time it wrote this file. */
  heartbeat: string;
  pipelines: {
    name: string;
    file: string;
    schedule: string;
    timezone: string;
    nextTick: string | null;
    nextLocal: string | null;
    running: boolean;
  }[];
  invalid: { file: string; issues: ConfigIssue[] }[];
}

/** The status file of a warehouse folder. */
export const scheduleStatusFile = (warehouseDir: string) => join(warehouseDir, 'schedule', 'status.json');

/** Written whole, by rename, so a reader never sees half of it. */
export async function writeScheduleStatus(file: string, status: ScheduleStatus): Promise<void> {
  await makeDirs(dirname(file), 0o700);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(status, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

export async function readScheduleStatus(file: string): Promise<ScheduleStatus | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as ScheduleStatus;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Whether the scheduler that wrote the status is alive: its process is there (signal 0) and its
 * heartbeat is not older than two ticks and a half.
 */
export function schedulerAlive(s: ScheduleStatus, now: Date, pidAlive: (pid: number) => boolean = processAlive): boolean {
  return pidAlive(s.pid) && now.getTime() - Date.parse(s.heartbeat) < 2.5 * HEARTBEAT_MS;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
