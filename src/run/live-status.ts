import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProgressEvent } from './run-options.js';
import { progressLine } from './progress.js';

/** The file in the warehouse folder where a run says where it stands, for `pipeline status` while it holds the database. */
export const LIVE_FILE = 'run-live.json';

/** A run in progress, as its process last wrote it. */
export interface LiveRun {
  pid: number;
  pipeline: string;
  /** Known once the run is planned (a new run's id, or the one resumed). */
  runId: string | null;
  /** The step it is in: ingest (post, collect, load), clusters, models, alerts, publish, summary, checkpoint. */
  step: string;
  startedAt: string;
  updatedAt: string;
  /** The last progress line (posted, ready, collected, CNY so far, time left). */
  progress: string | null;
  /** The last note (what it is doing, what it decided). */
  note: string | null;
}

/** Least time between two writes of the file for progress alone (a step change is written at once). */
const WRITE_EVERY_MS = 1000;

/**
 * Keeps `run-live.json` up to date while a run holds the warehouse: written by the holder only
 * (it is created after the database is opened), atomically (a temp file renamed into place,
 * owner-only), at most once a second for progress, and removed when the run lets go of the
 * database. A run killed outright leaves it behind; readers check its process is alive.
 */
export class LiveStatus {
  private readonly state: LiveRun;
  private last = 0;
  /** The write a throttled progress event is owed, so the file never keeps a line a burst replaced. */
  private trailing: NodeJS.Timeout | undefined;

  constructor(
    private readonly dir: string,
    pipeline: string,
    private readonly now: () => Date,
  ) {
    const at = now().toISOString();
    this.state = { pid: process.pid, pipeline, runId: null, step: 'ingest', startedAt: at, updatedAt: at, progress: null, note: null };
    this.write(true);
  }

  runId(id: string): void {
    this.state.runId = id;
    this.write(true);
  }

  step(name: string): void {
    this.state.step = name;
    this.write(true);
  }

  event(e: ProgressEvent): void {
    if (e.kind === 'note') this.state.note = e.text;
    else this.state.progress = progressLine(e);
    this.write(e.kind === 'note');
  }

  end(): void {
    clearTimeout(this.trailing);
    this.trailing = undefined;
    rmSync(join(this.dir, LIVE_FILE), { force: true });
  }

  private write(force: boolean): void {
    const t = Date.now();
    if (!force && t - this.last < WRITE_EVERY_MS) {
      // Written when the second is up: the last event of a burst (the last POST of a night) is
      // otherwise shown stale until the next one, up to a poll interval later.
      this.trailing ??= setTimeout(
        () => {
          this.trailing = undefined;
          this.write(true);
        },
        WRITE_EVERY_MS - (t - this.last),
      ).unref();
      return;
    }
    clearTimeout(this.trailing);
    this.trailing = undefined;
    this.last = t;
    this.state.updatedAt = this.now().toISOString();
    const file = join(this.dir, LIVE_FILE);
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, JSON.stringify(this.state, null, 2), { mode: 0o600 });
      renameSync(tmp, file);
    } catch {
      // A status file that cannot be written costs the run nothing: `pipeline status` waits instead.
    }
  }
}

/** The run in progress in `dir`, when its file is there and its process is alive. */
export function readLiveRun(dir: string): LiveRun | undefined {
  let run: LiveRun;
  try {
    run = JSON.parse(readFileSync(join(dir, LIVE_FILE), 'utf8')) as LiveRun;
  } catch {
    return undefined;
  }
  if (!Number.isInteger(run.pid) || run.pid <= 0) return undefined;
  try {
    process.kill(run.pid, 0);
  } catch (err) {
    // EPERM: alive, another user's. ESRCH: gone (killed outright), the file is stale.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return run;
}
