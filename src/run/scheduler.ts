import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { CronClock, floorMinute } from '../config/cron-clock.js';
import { RESUME_WITHIN_MS } from './ingest-step.js';
import { LOCKED_RETRY, type ScheduleEvent, type ScheduleEventKind, type ScheduleJournal } from './schedule-journal.js';

export interface ScheduledPipeline {
  name: string;
  file: string;
  schedule: string;
  timezone: string;
}

export interface SchedulerOptions {
  pipelines: readonly ScheduledPipeline[];
  now: () => Date;
  /**
   * Runs one pipeline (resuming its unfinished run first); aborting means "stop and save". With
   * `finishOnly`, only a run of this night left unfinished is finished, and no new one is started.
   */
  run: (p: ScheduledPipeline, signal: AbortSignal, o?: { finishOnly?: boolean }) => Promise<{ runId: string; state: string }>;
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
 * run a pipeline twice. Driven by `tick(minute)`, so tests use a fake clock.
 */
export class Scheduler {
  private readonly entries: Entry[];
  private readonly queue = new PQueue({ concurrency: 1 });
  private readonly busy = new Set<string>();
  private readonly stopper = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private lastTick: number | undefined;

  constructor(private readonly o: SchedulerOptions) {
    this.entries = o.pipelines.map((p) => ({ p, clock: new CronClock(p.schedule, p.timezone), fired: new Set() }));
  }

  /** Catches up, once per pipeline, the latest run missed while the scheduler was down. */
  async startUp(): Promise<void> {
    const now = this.o.now();
    const horizon = new Date(now.getTime() - (this.o.catchUpDays ?? 7) * 86_400_000);
    for (const e of this.entries) {
      const last = await this.o.journal.lastScheduled(e.p.name);
      if (!last) continue; // never scheduled before: nothing can have been missed
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
        await this.record(e, scheduledFor, 'finished', { runId: r.runId, detail: r.state });
      } catch (err) {
        const locked = (err as { code?: unknown }).code === 'ETL_WAREHOUSE_LOCKED' && !this.stopper.signal.aborted;
        if (locked) e.retry = { scheduledFor, at: this.o.now().getTime() + LOCKED_RETRY_MS };
        this.o.log.error({ pipeline: e.p.name, err: (err as Error).message }, 'scheduled run failed');
        await this.record(e, scheduledFor, 'failed', {
          detail: (err as Error).message + (locked ? LOCKED_RETRY : ''),
        });
      } finally {
        this.busy.delete(e.p.name);
      }
    });
  }

  private record(e: Entry, scheduledFor: Date, event: ScheduleEventKind, extra: Partial<ScheduleEvent> = {}): Promise<void> {
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
