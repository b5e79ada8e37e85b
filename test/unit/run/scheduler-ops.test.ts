import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scheduledPipelines, scheduleStatusReport } from '../../../src/cli/commands/schedule.js';
import { ScheduleJournal } from '../../../src/schedule/schedule-journal.js';
import { readScheduleStatus, scheduleStatusFile } from '../../../src/schedule/schedule-status.js';
import { Scheduler, type ScheduledPipeline } from '../../../src/schedule/scheduler.js';

const MIN = 60_000;
const JOB = 'jobs:\n  - kind: serp\n    locations: [2840]\n    keywords: [a]\n';

/** A pino logger whose JSON lines are kept, to check what the scheduler says. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write: (c, _e, cb) => (lines.push(JSON.parse(String(c)) as Record<string, unknown>), cb()) });
  return { log: pino({ level: 'info' }, sink), lines };
}

describe('the scheduler as an operator sees it (fake clock)', () => {
  let dir: string;
  let wh: string;
  let journal: ScheduleJournal;
  let clock: number;
  const now = () => new Date(clock);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sched-ops-'));
    wh = join(dir, 'warehouse');
    journal = new ScheduleJournal(join(wh, 'schedule', 'events.ndjson'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('skips an invalid file, reports file, line, field and rule, keeps the others, and takes the file back once fixed', async () => {
    await writeFile(join(dir, 'a.yaml'), `name: good\nschedule: "* * * * *"\ntimezone: UTC\n${JOB}`);
    await writeFile(join(dir, 'b.yaml'), `name: bad\nschedule: "* * * * *"\ntimezone: UTC\n${JOB}    depht: 20\n`);
    const folder = await scheduledPipelines(dir);
    expect(folder.pipelines.map((p) => p.name)).toEqual(['good']);
    expect(folder.broken.map((b) => b.file)).toEqual([join(dir, 'b.yaml')]);
    const { log, lines } = capture();
    const ran: string[] = [];
    clock = Date.parse('2026-11-21T10:00:20Z');
    const s = new Scheduler({
      ...folder,
      reload: () => scheduledPipelines(dir),
      statusFile: scheduleStatusFile(wh),
      now,
      journal,
      log,
      run: async (p) => (
        ran.push(`${p.name}@${now().toISOString().slice(11, 16)}`),
        { runId: `r-${p.name}`, state: 'completed', exitCode: 0 }
      ),
    });
    await s.startUp();
    await s.idle();
    clock = Date.parse('2026-11-21T10:01:00Z');
    await s.tick(now());
    await s.idle();
    expect(ran).toEqual(['good@10:00', 'good@10:01']);
    // Said in the log, the journal and the status file, with file, line, field and rule.
    const said = lines.filter((l) => l.level === 50 && String(l.msg).startsWith('pipeline file invalid, skipped'));
    expect(said).toHaveLength(1); // once, not at each tick
    expect(said[0]!.msg).toContain(`${join(dir, 'b.yaml')}:8:5 jobs[0].depht: unknown field 'depht' (did you mean 'depth'?)`);
    const invalid = (await journal.events()).filter((e) => e.event === 'invalid');
    expect(invalid).toMatchObject([{ file: join(dir, 'b.yaml'), detail: expect.stringContaining(':8:5 jobs[0].depht: unknown field') }]);
    const status = await readScheduleStatus(scheduleStatusFile(wh));
    expect(status!.invalid).toEqual([
      {
        file: join(dir, 'b.yaml'),
        issues: [expect.objectContaining({ line: 8, field: 'jobs[0].depht', rule: expect.stringMatching(/^unknown field 'depht'/) })],
      },
    ]);
    // Fixed: read again at the next minute, no restart.
    await writeFile(join(dir, 'b.yaml'), `name: bad\nschedule: "* * * * *"\ntimezone: UTC\n${JOB}    depth: 20\n`);
    clock = Date.parse('2026-11-21T10:02:00Z');
    await s.tick(now());
    await s.idle();
    expect(ran.slice(2).sort()).toEqual(['bad@10:02', 'good@10:02']);
    expect((await journal.events()).filter((e) => e.event === 'valid').map((e) => e.file)).toEqual([join(dir, 'b.yaml')]);
    expect((await readScheduleStatus(scheduleStatusFile(wh)))!.invalid).toEqual([]);
  });

  const nightly: ScheduledPipeline = { name: 'nightly', file: 'nightly.yaml', schedule: '0 3 * * *', timezone: 'UTC' };

  it("catches up a never-run pipeline's night missed while the scheduler was down, and says so in a warn line", async () => {
    const ran: string[] = [];
    const run = async () => (ran.push(now().toISOString()), { runId: 'r1', state: 'completed', exitCode: 0 });
    // Started the evening before: the pipeline is watched, it has never run.
    clock = Date.parse('2026-11-20T22:00:00Z');
    const first = new Scheduler({ pipelines: [nightly], now, journal, log: pino({ level: 'silent' }), run });
    await first.startUp();
    await first.idle();
    expect(ran).toEqual([]);
    await first.stop();
    // Down across 03:00 (a crash loop, a reboot), back at 10:00: the 03:00 night runs now.
    clock = Date.parse('2026-11-21T10:00:00Z');
    const { log, lines } = capture();
    const second = new Scheduler({ pipelines: [nightly], now, journal, log, run });
    await second.startUp();
    await second.idle();
    expect(ran).toEqual(['2026-11-21T10:00:00.000Z']);
    const missed = (await journal.events()).filter((e) => e.event === 'missed');
    expect(missed.map((e) => e.scheduledFor)).toEqual(['2026-11-21T03:00:00.000Z']);
    expect(lines.filter((l) => l.level === 40 && String(l.msg).startsWith('missed night'))).toMatchObject([
      { pipeline: 'nightly', scheduledFor: '2026-11-21T03:00:00.000Z', localTime: '2026-11-21 03:00 UTC' },
    ]);
  });

  it('writes a status file each tick that `schedule --status` reads: alive, next tick, last result with exit code and run id, missed nights', async () => {
    await journal.record({
      pipeline: 'nightly',
      scheduledFor: '2026-11-19T03:00:00.000Z',
      localTime: '',
      event: 'finished',
      at: '2026-11-19T03:05:00.000Z',
    });
    clock = Date.parse('2026-11-21T10:00:00Z');
    const s = new Scheduler({
      pipelines: [nightly],
      statusFile: scheduleStatusFile(wh),
      now,
      journal,
      log: pino({ level: 'silent' }),
      run: async () => ({ runId: 'run-42', state: 'partial', exitCode: 3 }),
    });
    await s.startUp();
    await s.idle();
    clock += MIN;
    await s.tick(now());
    const raw = JSON.parse(await readFile(scheduleStatusFile(wh), 'utf8')) as { pid: number; heartbeat: string };
    expect(raw.pid).toBe(process.pid);
    expect(raw.heartbeat).toBe('2026-11-21T10:01:00.000Z');
    const report = await scheduleStatusReport(wh, new Date('2026-11-21T10:01:30Z'));
    expect(report.alive).toBe(true);
    expect(report.pipelines).toEqual([
      {
        name: 'nightly',
        schedule: '0 3 * * * UTC',
        nextTick: '2026-11-22T03:00:00.000Z',
        nextLocal: '2026-11-22 03:00 UTC',
        running: false,
        last: {
          event: 'finished',
          state: 'partial',
          exitCode: 3,
          at: '2026-11-21T10:00:00.000Z',
          scheduledFor: '2026-11-21T03:00:00.000Z',
          runId: 'run-42',
        },
        missed: [
          {
            event: 'missed',
            scheduledFor: '2026-11-21T03:00:00.000Z',
            localTime: '2026-11-21 03:00 UTC',
            detail: 'the scheduler was not running at this time; running it now',
          },
        ],
      },
    ]);
    // A heartbeat older than two ticks and a half: not alive, whatever the pid.
    expect((await scheduleStatusReport(wh, new Date('2026-11-21T10:05:00Z'))).alive).toBe(false);
  });
});
