import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CronClock } from '../../../src/config/cron-clock.js';
import { EtlError } from '../../../src/errors.js';
import { LOCKED_RETRY, ScheduleJournal } from '../../../src/schedule/schedule-journal.js';
import { Scheduler, type ScheduledPipeline } from '../../../src/schedule/scheduler.js';

const log = pino({ level: 'silent' });
const MIN = 60_000;

describe('Scheduler on a fake clock', () => {
  let dir: string;
  let journal: ScheduleJournal;
  let clock: number;
  const now = () => new Date(clock);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sched-'));
    journal = new ScheduleJournal(join(dir, 'schedule', 'events.ndjson'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const p = (schedule: string, timezone = 'UTC', name = 'nightly'): ScheduledPipeline => ({
    name,
    file: `${name}.yaml`,
    schedule,
    timezone,
  });

  /** Ticks every minute in [fromIso, toIso), as the real driver would (runs are minutes apart). */
  async function tickRange(s: Scheduler, fromIso: string, toIso: string) {
    for (let t = Date.parse(fromIso); t < Date.parse(toIso); t += MIN) {
      clock = t;
      await s.tick(new Date(t));
      await s.idle();
    }
  }

  /** The scheduled minutes that started a run, from the scheduler's own record. */
  async function started(): Promise<string[]> {
    return (await journal.events()).filter((e) => e.event === 'started').map((e) => e.scheduledFor);
  }

  async function until(cond: () => boolean) {
    for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  }

  it('never runs one pipeline twice at once: an overlapping tick is skipped and recorded', async () => {
    let release!: () => void;
    const runs: string[] = [];
    const s = new Scheduler({
      pipelines: [p('* * * * *')],
      now,
      journal,
      log,
      run: async () => {
        runs.push(now().toISOString());
        await new Promise<void>((r) => (release = r));
        return { runId: 'r1', state: 'completed' };
      },
    });
    clock = Date.parse('2026-11-21T10:00:00Z');
    await s.tick(now());
    await until(() => runs.length === 1);
    clock += MIN;
    await s.tick(now());
    release();
    await s.idle();
    expect(runs).toEqual(['2026-11-21T10:00:00.000Z']);
    const events = (await journal.events()).map((e) => [e.scheduledFor, e.event]);
    expect(events).toEqual([
      ['2026-11-21T10:00:00.000Z', 'started'],
      ['2026-11-21T10:01:00.000Z', 'skipped'],
      ['2026-11-21T10:00:00.000Z', 'finished'],
    ]);
  });

  it('runs a run missed while it was down once at start-up, not once per missed day', async () => {
    await journal.record({
      pipeline: 'nightly',
      scheduledFor: '2026-11-19T03:00:00.000Z',
      localTime: '',
      event: 'finished',
      at: '2026-11-19T03:05:00.000Z',
    });
    const ran: string[] = [];
    clock = Date.parse('2026-11-21T10:00:00Z');
    const s = new Scheduler({
      pipelines: [p('0 3 * * *')],
      now,
      journal,
      log,
      run: async () => (ran.push('x'), { runId: 'r', state: 'completed' }),
    });
    await s.startUp();
    await s.idle();
    expect(ran).toHaveLength(1);
    const missed = (await journal.events()).filter((e) => e.event === 'missed');
    expect(missed.map((e) => e.scheduledFor)).toEqual(['2026-11-21T03:00:00.000Z']);
  });

  /** One line of the journal for the pipeline 'nightly', as an earlier scheduler process wrote it. */
  const line = (event: 'started' | 'finished' | 'failed', scheduledFor: string, at: string, detail?: string) =>
    journal.record({ pipeline: 'nightly', scheduledFor, localTime: '', event, at, ...(detail ? { detail } : {}) });

  /** A scheduler of 'nightly' at 03:00 UTC whose runs record how they were asked to run. */
  const nightly = (calls: unknown[]) =>
    new Scheduler({
      pipelines: [p('0 3 * * *')],
      now,
      journal,
      log,
      run: async (_p, _s, how) => (calls.push(how ?? {}), { runId: 'r', state: 'completed' }),
    });

  it('finishes at start-up a run the scheduler was killed during, when it is of this night, and starts no new one', async () => {
    await line('finished', '2026-11-20T03:00:00.000Z', '2026-11-20T03:05:00.000Z');
    await line('started', '2026-11-21T03:00:00.000Z', '2026-11-21T03:00:01.000Z'); // then killed
    const calls: unknown[] = [];
    clock = Date.parse('2026-11-21T03:20:00Z');
    const s = nightly(calls);
    await s.startUp();
    await s.idle();
    expect(calls).toEqual([{ finishOnly: true }]);
    const events = (await journal.events()).slice(2).map((e) => [e.scheduledFor, e.event, e.detail]);
    expect(events).toEqual([
      ['2026-11-21T03:00:00.000Z', 'missed', 'the scheduler stopped while this run worked; finishing it now'],
      ['2026-11-21T03:00:00.000Z', 'started', undefined],
      ['2026-11-21T03:00:00.000Z', 'finished', 'completed'],
    ]);
    // Finished: the next start-up has nothing to finish.
    await nightly(calls).startUp();
    expect(calls).toHaveLength(1);
  });

  it('finishes at start-up a run that ended interrupted when the scheduler was stopped (SIGTERM during a deploy)', async () => {
    const night = '2026-11-21T03:00:00.000Z';
    await line('started', night, '2026-11-21T03:01:00.000Z');
    await line('finished', night, '2026-11-21T03:01:00.000Z', 'partial, interrupted');
    const calls: unknown[] = [];
    clock = Date.parse('2026-11-21T03:05:00Z');
    const first = nightly(calls);
    await first.startUp();
    await first.idle();
    expect(calls).toEqual([{ finishOnly: true }]);
    // A run that ended partial for another reason (a budget) is not finished at start-up.
    await line('started', night, '2026-11-21T03:01:00.000Z');
    await line('finished', night, '2026-11-21T03:01:00.000Z', 'partial');
    const second = nightly(calls);
    await second.startUp();
    await second.idle();
    expect(calls).toHaveLength(1);
  });

  it('leaves a run killed more than 12 hours ago to the next tick, which settles it and buys that night', async () => {
    await line('started', '2026-11-20T03:00:00.000Z', '2026-11-20T03:00:01.000Z');
    const calls: unknown[] = [];
    clock = Date.parse('2026-11-21T02:00:00Z');
    const s = nightly(calls);
    await s.startUp();
    await s.idle();
    expect(calls).toEqual([]);
  });

  it('tries a night refused by a held warehouse again each minute until it runs; other failures are not tried again', async () => {
    const calls: string[] = [];
    let refusals = 2;
    const s = new Scheduler({
      pipelines: [p('0 3 * * *'), p('0 3 * * *', 'UTC', 'broken')],
      now,
      journal,
      log,
      run: async (q) => {
        calls.push(`${q.name} ${now().toISOString().slice(11, 16)}`);
        if (q.name === 'broken') throw new EtlError('ETL_CONFIG_INVALID', 'broken.yaml:3:5 jobs: required');
        if (refusals-- > 0) throw new EtlError('ETL_WAREHOUSE_LOCKED', 'warehouse.duckdb is held by `pipeline export` (PID 42)');
        return { runId: 'r1', state: 'completed' };
      },
    });
    await tickRange(s, '2026-11-21T03:00:00Z', '2026-11-21T03:05:00Z');
    expect(calls).toEqual(['nightly 03:00', 'broken 03:00', 'nightly 03:01', 'nightly 03:02']);
    const nightly = (await journal.events()).filter((e) => e.pipeline === 'nightly').map((e) => [e.scheduledFor.slice(11, 16), e.event]);
    expect(nightly).toEqual([
      ['03:00', 'started'],
      ['03:00', 'failed'],
      ['03:00', 'started'],
      ['03:00', 'failed'],
      ['03:00', 'started'],
      ['03:00', 'finished'],
    ]);
    expect((await journal.events()).find((e) => e.event === 'failed')!.detail).toMatch(/tried again each minute/);
  });

  it('tries again at start-up a night refused by a held warehouse before the scheduler stopped, until its next time', async () => {
    const refused = `warehouse.duckdb is held by \`pipeline export\` (PID 42)${LOCKED_RETRY}`;
    await line('started', '2026-11-21T03:00:00.000Z', '2026-11-21T03:00:01.000Z');
    await line('failed', '2026-11-21T03:00:00.000Z', '2026-11-21T03:01:01.000Z', refused);
    // Restarted (a deploy) before the retry came: the night runs now, whole (not only finished).
    const calls: unknown[] = [];
    clock = Date.parse('2026-11-21T03:20:00Z');
    const first = nightly(calls);
    await first.startUp();
    await first.idle();
    expect(calls).toEqual([{}]);
    const events = (await journal.events()).map((e) => [e.scheduledFor.slice(11, 16), e.event, e.detail ?? '']);
    expect(events.slice(2)).toEqual([
      ['03:00', 'missed', 'refused by a held warehouse before the scheduler stopped; trying it again now'],
      ['03:00', 'started', ''],
      ['03:00', 'finished', 'completed'],
    ]);
    // Started again after that: nothing is owed.
    const again = nightly(calls);
    await again.startUp();
    await again.idle();
    expect(calls).toEqual([{}]);
  });

  it('does not try at start-up a refused night whose next time has come, nor a night that failed otherwise', async () => {
    const refused = `warehouse.duckdb is held by \`pipeline export\` (PID 42)${LOCKED_RETRY}`;
    await line('failed', '2026-11-21T03:00:00.000Z', '2026-11-21T03:01:01.000Z', 'broken.yaml:3:5 jobs: required');
    const calls: unknown[] = [];
    clock = Date.parse('2026-11-21T03:20:00Z');
    const s = nightly(calls);
    await s.startUp();
    await s.idle();
    expect(calls).toEqual([]);
    // Refused, and the scheduler down past the next night: that night is the missed one, run once.
    await line('failed', '2026-11-22T03:00:00.000Z', '2026-11-22T03:01:01.000Z', refused);
    clock = Date.parse('2026-11-23T04:00:00Z');
    const t = nightly(calls);
    await t.startUp();
    await t.idle();
    expect(calls).toEqual([{}]);
    expect((await journal.events()).filter((e) => e.event === 'missed').map((e) => e.scheduledFor)).toEqual(['2026-11-23T03:00:00.000Z']);
  });

  it('runs a run due in the very minute it starts, once', async () => {
    await journal.record({
      pipeline: 'nightly',
      scheduledFor: '2026-11-20T03:00:00.000Z',
      localTime: '',
      event: 'finished',
      at: '2026-11-20T03:05:00.000Z',
    });
    clock = Date.parse('2026-11-21T03:00:30Z');
    const s = new Scheduler({ pipelines: [p('0 3 * * *')], now, journal, log, run: async () => ({ runId: 'r', state: 'completed' }) });
    await s.startUp();
    await s.tick(new Date('2026-11-21T03:00:00Z')); // a late first tick of the same minute
    await s.idle();
    expect(await started()).toEqual(['2026-11-21T03:00:00.000Z']);
  });

  it('does not catch up on the very first start, with no history', async () => {
    const ran: string[] = [];
    clock = Date.parse('2026-11-21T10:00:00Z');
    const s = new Scheduler({
      pipelines: [p('0 3 * * *')],
      now,
      journal,
      log,
      run: async () => (ran.push('x'), { runId: 'r', state: 'completed' }),
    });
    await s.startUp();
    await s.idle();
    expect(ran).toHaveLength(0);
  });

  it('fires in the pipeline time zone', async () => {
    const s = new Scheduler({
      pipelines: [p('0 3 * * *', 'America/New_York')],
      now,
      journal,
      log,
      run: async () => ({ runId: 'r', state: 'ok' }),
    });
    await tickRange(s, '2026-11-21T00:00:00Z', '2026-11-22T00:00:00Z');
    expect(await started()).toEqual(['2026-11-21T08:00:00.000Z']); // 03:00 EST = 08:00 UTC
  });

  it('runs once on the day the clocks go back, though 01:30 happens twice', async () => {
    const s = new Scheduler({
      pipelines: [p('30 1 * * *', 'Europe/London')],
      now,
      journal,
      log,
      run: async () => ({ runId: 'r', state: 'ok' }),
    });
    await tickRange(s, '2026-10-24T23:00:00Z', '2026-10-25T04:00:00Z');
    expect(await started()).toEqual(['2026-10-25T00:30:00.000Z']); // 01:30 BST; 01:30 GMT an hour later is skipped
  });

  it('skips a time that does not exist on the day the clocks go forward', async () => {
    const s = new Scheduler({
      pipelines: [p('30 2 * * *', 'America/New_York')],
      now,
      journal,
      log,
      run: async () => ({ runId: 'r', state: 'ok' }),
    });
    await tickRange(s, '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z');
    // 2026-03-08 02:30 does not exist in New York; the days around it run at 02:30 local.
    expect(await started()).toEqual(['2026-03-07T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
  });

  it('asks a running pipeline to stop and waits for it on stop()', async () => {
    let sawAbort = false;
    let inRun = false;
    const s = new Scheduler({
      pipelines: [p('* * * * *')],
      now,
      journal,
      log,
      run: (_p, signal) =>
        new Promise((resolve) => {
          inRun = true;
          signal.addEventListener('abort', () => {
            sawAbort = true;
            resolve({ runId: 'r', state: 'partial' });
          });
        }),
    });
    clock = Date.parse('2026-11-21T10:00:00Z');
    await s.tick(now());
    await until(() => inRun);
    await s.stop();
    expect(sawAbort).toBe(true);
    expect((await journal.events()).map((e) => e.event)).toEqual(['started', 'finished']);
  });
});

describe('CronClock', () => {
  it('lists the next run times in the time zone', () => {
    const c = new CronClock('0 3 * * 1', 'Europe/London');
    expect(c.next(new Date('2026-11-21T10:00:00Z'), 2).map((d) => d.toISOString())).toEqual([
      '2026-11-23T03:00:00.000Z',
      '2026-11-30T03:00:00.000Z',
    ]);
  });
});
