import { appendFile, readFile } from 'node:fs/promises';
import { makeDirs } from '../paths.js';
import { dirname } from 'node:path';

/**
 * `watching`: the scheduler first saw this pipeline (a night missed after it, even before any
 * run, is caught up at start-up); `invalid` / `valid`: a file of the folder failed validation
 * (skipped, the others run) / was fixed or removed (`file` names it, `pipeline` is empty).
 */
export type ScheduleEventKind = 'started' | 'finished' | 'failed' | 'skipped' | 'missed' | 'watching' | 'invalid' | 'valid';

/** In a `finished` line's detail: the run was stopped with the scheduler (`partial, interrupted`), and is finished at its next start. */
export const INTERRUPTED = 'interrupted';

/** The end of a `failed` line's detail for a night refused by a held warehouse: it is tried again until it runs or its next time comes. */
export const LOCKED_RETRY = ' (tried again each minute until it runs or its next time comes)';

/** One thing the scheduler did about one scheduled minute of one pipeline. */
export interface ScheduleEvent {
  pipeline: string;
  /** The scheduled minute (UTC). */
  scheduledFor: string;
  /** The same minute on the pipeline's wall clock, e.g. `2026-10-25 01:30 Europe/London`. */
  localTime: string;
  event: ScheduleEventKind;
  at: string;
  runId?: string;
  /** The run's exit code as `pipeline run` would give it (finished and failed lines). */
  exitCode?: number;
  /** The pipeline file (`invalid` and `valid` lines). */
  file?: string;
  detail?: string;
}

/**
 * The scheduler's record, an append-only NDJSON file beside the warehouse
 * (`warehouse/schedule/events.ndjson`, readable with DuckDB's `read_json`). A file rather
 * than a table so the scheduler never holds the DuckDB file open between runs, leaving it
 * free for other readers.
 */
export class ScheduleJournal {
  /** Appends one after another, so the file keeps the order events happened in. */
  private tail: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  record(e: ScheduleEvent): Promise<void> {
    const line = `${JSON.stringify(e)}\n`;
    this.tail = this.tail.then(async () => {
      // Owner-only, whatever the umask, as the warehouse beside it.
      // Not mkdir's `recursive`, which spins forever where a folder cannot be made (/proc/1/x).
      await makeDirs(dirname(this.file), 0o700);
      await appendFile(this.file, line, { mode: 0o600 });
    });
    return this.tail;
  }

  async events(): Promise<ScheduleEvent[]> {
    await this.tail;
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as ScheduleEvent);
  }

  /**
   * The scheduled minute of a pipeline's latest run that started and never ended (no `finished`
   * or `failed` after its `started`: the scheduler was killed while it ran), or that ended
   * interrupted (the scheduler was stopped while it ran).
   */
  async interrupted(pipeline: string): Promise<Date | null> {
    let open: string | null = null;
    for (const e of await this.events()) {
      if (e.pipeline !== pipeline) continue;
      if (e.event === 'started') open = e.scheduledFor;
      else if ((e.event === 'finished' || e.event === 'failed') && e.scheduledFor === open)
        open = e.event === 'finished' && e.detail?.split(', ').includes(INTERRUPTED) ? open : null;
    }
    return open ? new Date(open) : null;
  }

  /**
   * The scheduled minute of a pipeline's night refused by a held warehouse, when that refusal is
   * its last line: a retry a scheduler still owed when it stopped.
   */
  async lockedOut(pipeline: string): Promise<Date | null> {
    let last: ScheduleEvent | undefined;
    for (const e of await this.events()) if (e.pipeline === pipeline) last = e;
    return last?.event === 'failed' && last.detail?.endsWith(LOCKED_RETRY) ? new Date(last.scheduledFor) : null;
  }

  /** The latest scheduled minute the scheduler handled for a pipeline, whatever it did. */
  async lastScheduled(pipeline: string): Promise<Date | null> {
    let last: string | null = null;
    for (const e of await this.events()) if (e.pipeline === pipeline && (last === null || e.scheduledFor > last)) last = e.scheduledFor;
    return last ? new Date(last) : null;
  }
}
