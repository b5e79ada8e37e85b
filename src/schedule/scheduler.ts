import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { ConfigIssue } from '../errors.js';
import { CronClock, floorMinute } from '../config/index.js';
import { RESUME_WITHIN_MS } from '../run/index.js';
import { exitCodeFor } from '../errors.js';
import { redact } from '../redact.js';
import { LOCKED_RETRY, type ScheduleEvent, type ScheduleEventKind, type ScheduleJournal } from './schedule-journal.js';
import { writeScheduleStatus, type ScheduleStatus } from './schedule-status.js';

export interface ScheduledPipeline {
  name: string;
  file: string;
  schedule: string;
  timezone: string;
}

/** A pipeline file of the folder that failed validation: skipped, reported, read again each tick. */
export interface BrokenFile {
  file: string;
  issues: ConfigIssue[];
}

/** What the folder holds now: its valid scheduled pipelines and its invalid files. */
export interface PipelineFolder {
  pipelines: ScheduledPipeline[];
  broken: BrokenFile[];
}

export interface SchedulerOptions {
  pipelines: readonly ScheduledPipeline[];
  /** Invalid files found at start-up (reported in the journal and the status file). */
  broken?: readonly BrokenFile[];
  /**
   * Reads the folder again; called at each tick, so a file fixed, added, broken or removed takes
   * effect without a restart. Absent: the pipelines given are kept.
   */
  reload?: () => Promise<PipelineFolder>;
  /** Where the status file (`pipeline schedule --status`) is written each tick; absent: none. */
  statusFile?: string;
  now: () => Date;
  /**
   * Runs one pipeline (resuming its unfinished run first); aborting means "stop and save". With
   * `finishOnly`, only a run of this night left unfinished is finished, and no new one is started.
   */
  run: (
    p: ScheduledPipeline,
    signal: AbortSignal,
    o?: { finishOnly?: boolean },
  ) => Promise<{ runId: string; state: string; exitCode?: number }>;
  journal: ScheduleJournal;
  log: Logger;
  /** How far back a run missed while the scheduler was down is still caught up. */
  catchUpDays?: number;
}

interface Entry {
  p: ScheduledPipeline;
  clock: CronClock;
  fired: Set<string>;
  /** A run refused because another process held the warehouse: tried again from this minute on, until the next scheduled one. */
  retry?: { scheduledFor: Date; at: number };
}

/** How long after a run refused by a held warehouse (exit code 7) it is tried again. */
const LOCKED_RETRY_MS = 60_000;

/**
 * Runs pipelines on their cron schedules. One run at a time (they share one DuckDB file);
 * a tick of a pipeline that is still running or waiting is skipped and recorded, never
 * queued twice; a run missed while the scheduler was down runs once at start-up; each
 * wall-clock minute fires once, so the repeated hour of a daylight-saving change does not
 * run a pipeline twice. Driven by `tick(minute)`, so tests use a fake clock. With `reload`, the
 * folder is read again at each tick: an invalid file is skipped and reported (log, journal,
 * status file) while the others run, and scheduled again once fixed. With `statusFile`, each
 * tick (and each run's end) rewrites the file `pipeline schedule --status` reads.
 */
export class Scheduler {
  private entries: Entry[];
  /** Invalid files now, by file, with the text last reported (reported again only when it changes). */
  private broken = new Map<string, { issues: ConfigIssue[]; text: string }>();
  private readonly startedAt: Date;
  private readonly queue = new PQueue({ concurrency: 1 });
  private readonly busy = new Set<string>();
  private readonly stopper = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private lastTick: number | undefined;

  constructor(private readonly o: SchedulerOptions) {
    this.entries = o.pipelines.map((p) => ({ p, clock: new CronClock(p.schedule, p.timezone), fired: new Set() }));
    this.startedAt = o.now();
  }

  /** Invalid files, as last read. */
  brokenFiles(): BrokenFile[] {
    return [...this.broken].map(([file, b]) => ({ file, issues: b.issues }));
  }

  /** Pipelines scheduled now, as last read. */
  pipelines(): ScheduledPipeline[] {
    return this.entries.map((e) => e.p);
  }

  /**
   * Takes in the folder as read now: a pipeline whose schedule changed gets a new clock, one
   * removed is dropped (a run of it under way ends as it would), one new (or valid again) is
   * scheduled from this minute on. An invalid file is logged and journaled once per distinct
   * problem, and again as fixed when it is.
   */
  private async apply(folder: PipelineFolder): Promise<void> {
    const old = new Map(this.entries.map((e) => [e.p.name, e]));
    const next: Entry[] = [];
    for (const p of folder.pipelines) {
      const e = old.get(p.name);
      if (e && e.p.schedule === p.schedule && e.p.timezone === p.timezone) {
        // The same entry, so its state (fired minutes, a retry owed, a run under way) stays.
        e.p = p;
        next.push(e);
      } else {
        next.push({ p, clock: new CronClock(p.schedule, p.timezone), fired: new Set() });
        if (!e) this.o.log.info({ pipeline: p.name, file: p.file, schedule: `${p.schedule} ${p.timezone}` }, 'pipeline scheduled');
      }
    }
    for (const name of old.keys())
      if (!next.some((e) => e.p.name === name))
        this.o.log.warn({ pipeline: name }, 'pipeline no longer scheduled (its file was removed, invalid, or lost its schedule:)');
    this.entries = next;
    await this.reportBroken(folder.broken);
  }

  private async reportBroken(broken: readonly BrokenFile[]): Promise<void> {
    // A rule may quote a value of the file: keys and secrets of the environment are cut, as the CLI's errors are.
    const secrets = [process.env.SVC_API_KEY, process.env.AWS_SECRET_ACCESS_KEY, process.env.AWS_SESSION_TOKEN].filter(
      (x): x is string => !!x,
    );
    const now = new Map(broken.map((b) => [b.file, b.issues.map((i) => ({ ...i, rule: redact(i.rule, secrets) }))]));
    for (const [file, issues] of now) {
      const text = issues.map((i) => `${i.file}:${i.line}:${i.column} ${i.field || '(file)'}: ${i.rule}`).join('; ');
      if (this.broken.get(file)?.text === text) continue;
      this.broken.set(file, { issues, text });
      this.o.log.error(
        { file, issues },
        `pipeline file invalid, skipped (the others keep running; fix it and it is read again at the next minute): ${text}`,
      );
      await this.o.journal.record({
        pipeline: '',
        file,
        scheduledFor: floorMinute(this.o.now()).toISOString(),
        localTime: '',
        event: 'invalid',
        at: this.o.now().toISOString(),
        detail: text,
      });
    }
    for (const file of [...this.broken.keys()]) {
      if (now.has(file)) continue;
      this.broken.delete(file);
      this.o.log.info({ file }, 'pipeline file valid again (or removed): no longer skipped');
      await this.o.journal.record({
        pipeline: '',
        file,
        scheduledFor: floorMinute(this.o.now()).toISOString(),
        localTime: '',
        event: 'valid',
        at: this.o.now().toISOString(),
      });
    }
  }

  /** Writes the status file (`pipeline schedule --status`): alive, next tick of each pipeline, invalid files. */
  async writeStatus(): Promise<void> {
    if (!this.o.statusFile) return;
    const now = this.o.now();
    const status: ScheduleStatus = {
      pid: process.pid,
      startedAt: this.startedAt.toISOString(),
      heartbeat: now.toISOString(),
      pipelines: this.entries.map((e) => {
        const [next] = e.clock.next(now, 1);
        return {
          name: e.p.name,
          file: e.p.file,
          schedule: e.p.schedule,
          timezone: e.p.timezone,
          nextTick: next ? next.toISOString() : null,
          nextLocal: next ? `${e.clock.localKey(next)} ${e.p.timezone}` : null,
          running: this.busy.has(e.p.name),
        };
      }),
      invalid: this.brokenFiles(),
    };
    try {
      await writeScheduleStatus(this.o.statusFile, status);
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message, file: this.o.statusFile }, 'could not write the scheduler status file');
    }
  }

  /**
   * Catches up, once per pipeline, the latest run missed while the scheduler was down (since its
   * last scheduled minute, or since it was first watched for one that never ran), and reports
   * the invalid files found at start-up.
   */
  async startUp(): Promise<void> {
    await this.reportBroken(this.o.broken ?? []);
    const now = this.o.now();
    const horizon = new Date(now.getTime() - (this.o.catchUpDays ?? 7) * 86_400_000);
    for (const e of this.entries) {
      const last = await this.o.journal.lastScheduled(e.p.name);
      if (!last) {
        // First seen: from now on it is watched, so a night it misses while the scheduler is down
        // (before it ever ran) is caught up at the next start. A run due this very minute runs.
        await this.record(e, floorMinute(now), 'watching', { detail: `scheduled from ${e.p.file}` });
        const due = e.clock.matches(floorMinute(now)) ? floorMinute(now) : null;
        if (due) {
          e.fired.add(e.clock.localKey(due));
          this.enqueue(e, due);
        }
        continue;
      }
      const missed = e.clock.latestBetween(last > horizon ? last : horizon, now);
      // Killed or stopped while a run worked (a reboot, an OOM kill, a restart of the service): that run is
      // finished now, as `pipeline run` would (its posted tasks collected, the rest posted), not at
      // the next tick, which for a nightly schedule is a day later and would only settle it. A
      // missed later minute does it as well (its run finishes the unfinished one first).
      const cut = await this.o.journal.interrupted(e.p.name);
      if (!missed && cut && now.getTime() - cut.getTime() < RESUME_WITHIN_MS) {
        await this.record(e, cut, 'missed', { detail: 'the scheduler stopped while this run worked; finishing it now' });
        this.enqueue(e, cut, { finishOnly: true });
        continue;
      }
      // A night refused by a held warehouse is tried again until its next time, here too.
      const locked = await this.o.journal.lockedOut(e.p.name);
      if (!missed && locked) {
        await this.record(e, locked, 'missed', { detail: 'refused by a held warehouse before the scheduler stopped; trying it again now' });
        this.enqueue(e, locked);
        continue;
      }
      if (!missed) continue;
      // The first tick is the next minute: a run due in the current one is started here.
      e.fired.add(e.clock.localKey(missed));
      await this.record(e, missed, 'missed', { detail: 'the scheduler was not running at this time; running it now' });
      this.enqueue(e, missed);
    }
  }

  /** Handles one minute: fires every pipeline scheduled for it. */
  async tick(minute: Date): Promise<void> {
    const at = floorMinute(minute);
    this.lastTick = at.getTime();
    if (this.o.reload) {
      try {
        const before = new Set(this.entries.map((e) => e.p.name));
        await this.apply(await this.o.reload());
        // A pipeline new to this scheduler (added, or valid again) is watched from now on.
        for (const e of this.entries)
          if (!before.has(e.p.name) && !(await this.o.journal.lastScheduled(e.p.name)))
            await this.record(e, at, 'watching', { detail: `scheduled from ${e.p.file}` });
      } catch (err) {
        // The folder itself unreadable (moved, permissions): keep what was read last.
        this.o.log.error({ err: (err as Error).message }, 'could not read the pipelines folder; keeping the pipelines read before');
      }
    }
    for (const e of this.entries) {
      // A night refused by a held warehouse (an analyst's run, `pipeline export`, a notebook on
      // the private file) is tried again each minute until it runs or its next tick comes.
      const retry = e.retry;
      if (retry && !e.clock.matches(at) && retry.at <= at.getTime()) {
        e.retry = undefined;
        this.enqueue(e, retry.scheduledFor);
      }
      if (!e.clock.matches(at)) continue;
      e.retry = undefined;
      const key = e.clock.localKey(at);
      if (e.fired.has(key)) continue;
      e.fired.add(key);
      this.enqueue(e, at);
    }
    await this.writeStatus();
  }

  /** Ticks on the real clock at each minute boundary until `stop()`. */
  runForever(): void {
    const schedule = () => {
      const now = this.o.now().getTime();
      const next = Math.floor(now / 60_000) * 60_000 + 60_000;
      this.timer = setTimeout(
        async () => {
          // Every minute since the last tick, so a stalled event loop does not drop one.
          const from = this.lastTick === undefined ? next : this.lastTick + 60_000;
          for (let t = from; t <= Math.max(from, floorMinute(this.o.now()).getTime()); t += 60_000) await this.tick(new Date(t));
          if (!this.stopper.signal.aborted) schedule();
        },
        next - now + 50,
      );
    };
    schedule();
  }

  /** Stops ticking, asks running pipelines to stop and save, and waits for them. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.queue.clear();
    this.stopper.abort();
    await this.queue.onIdle();
  }

  /** Pipelines running or waiting now. */
  running(): string[] {
    return [...this.busy];
  }

  /** Resolves when no run is waiting or running. */
  idle(): Promise<void> {
    return this.queue.onIdle();
  }

  private enqueue(e: Entry, scheduledFor: Date, how: { finishOnly?: boolean } = {}): void {
    if (this.busy.has(e.p.name)) {
      this.o.log.warn({ pipeline: e.p.name, scheduledFor }, 'previous run still running or waiting: tick skipped');
      void this.record(e, scheduledFor, 'skipped', { detail: 'the previous run of this pipeline was still running or waiting' });
      return;
    }
    this.busy.add(e.p.name);
    void this.queue.add(async () => {
      try {
        if (this.stopper.signal.aborted) return;
        await this.record(e, scheduledFor, 'started');
        const r = await this.o.run(e.p, this.stopper.signal, how);
        await this.record(e, scheduledFor, 'finished', {
          runId: r.runId,
          detail: r.state,
          ...(r.exitCode === undefined ? {} : { exitCode: r.exitCode }),
        });
      } catch (err) {
        const locked = (err as { code?: unknown }).code === 'ETL_WAREHOUSE_LOCKED' && !this.stopper.signal.aborted;
        if (locked) e.retry = { scheduledFor, at: this.o.now().getTime() + LOCKED_RETRY_MS };
        this.o.log.error({ pipeline: e.p.name, err: (err as Error).message }, 'scheduled run failed');
        await this.record(e, scheduledFor, 'failed', {
          exitCode: exitCodeFor(err) || 1,
          detail: (err as Error).message + (locked ? LOCKED_RETRY : ''),
        });
      } finally {
        this.busy.delete(e.p.name);
        await this.writeStatus();
      }
    });
  }

  private record(e: Entry, scheduledFor: Date, event: ScheduleEventKind, extra: Partial<ScheduleEvent> = {}): Promise<void> {
    // A missed night is said in the log too, not only in the journal.
    if (event === 'missed')
      this.o.log.warn(
        { pipeline: e.p.name, scheduledFor: scheduledFor.toISOString(), localTime: `${e.clock.localKey(scheduledFor)} ${e.p.timezone}` },
        `missed night: ${extra.detail ?? ''}`,
      );
    return this.o.journal.record({
      pipeline: e.p.name,
      scheduledFor: scheduledFor.toISOString(),
      localTime: `${e.clock.localKey(scheduledFor)} ${e.p.timezone}`,
      event,
      at: this.o.now().toISOString(),
      ...extra,
    });
  }
}
