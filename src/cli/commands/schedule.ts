import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ConfigError } from '../../errors.js';
import { makeDirs, pathError } from '../../paths.js';
import type { CronClock as CronClockType } from '../../config/index.js';
import type { PipelineFolder, ScheduledPipeline, ScheduleEvent, ScheduleStatus } from '../../schedule/index.js';
import { checkOptions, num } from '../option-checks.js';

interface ScheduleArgs {
  dir: string;
  warehouse: string;
  list: boolean;
  status: boolean;
  json: boolean;
  count: number;
  'log-level'?: string;
  lake?: string;
}

/**
 * Every pipeline file of a folder that has a `schedule:`, and the invalid files apart (each with
 * its issues: file, line, field, rule), so one broken file does not stop the others.
 */
export async function scheduledPipelines(dir: string): Promise<PipelineFolder> {
  const { loadPipeline } = await import('../../config/index.js');
  const names = await readdir(dir).catch((err: unknown) => {
    throw pathError(err, `schedule ${dir}`, 'Pass the folder that holds the pipeline files (default: pipelines).');
  });
  const files = names.filter((f) => /\.ya?ml$/.test(f)).sort();
  const out: ScheduledPipeline[] = [];
  const broken: PipelineFolder['broken'] = [];
  for (const f of files) {
    try {
      const p = await loadPipeline(join(dir, f));
      if (p.schedule) out.push({ name: p.name, file: join(dir, f), schedule: p.schedule, timezone: p.timezone });
    } catch (err) {
      if (err instanceof ConfigError) broken.push({ file: join(dir, f), issues: err.issues });
      // A file that cannot be read (removed between readdir and open, permissions) is skipped the same way.
      else
        broken.push({ file: join(dir, f), issues: [{ file: join(dir, f), line: 0, column: 0, field: '', rule: (err as Error).message }] });
    }
  }
  return { pipelines: out, broken };
}

/** `pipeline schedule [DIR]`: run scheduled pipelines until SIGTERM, or list their next runs. */
export const scheduleCommand: CommandModule<object, ScheduleArgs> = {
  command: 'schedule [dir]',
  describe: 'Run every pipeline of DIR that has a schedule: (cron + timezone), until stopped',
  builder: (y: Argv) =>
    y
      .positional('dir', { type: 'string', default: 'pipelines', describe: 'folder of pipeline files' })
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder' })
      .option('list', { type: 'boolean', default: false, describe: 'print the next run times of each scheduled pipeline and exit' })
      .option('count', { type: 'number', default: 3, describe: 'how many next run times --list prints' })
      .option('status', {
        type: 'boolean',
        default: false,
        describe:
          "the running scheduler (alive, pid, heartbeat), each pipeline's next tick and last result, missed nights and invalid files, from --warehouse's schedule/ folder, and exit (no lock taken)",
      })
      .option('json', { type: 'boolean', default: false, describe: 'with --status: print JSON' })
      .option('lake', {
        type: 'string',
        describe: "s3://bucket/prefix each run mirrors its published files to (default PIPELINE_LAKE, else each file's lake:)",
      })
      .option('log-level', {
        type: 'string',
        choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
        describe: 'pino log level on stderr (default: LOG_LEVEL or info)',
      })
      .check(checkOptions({ count: num({ integer: true, min: 1 }) })) as Argv<ScheduleArgs>,
  handler: async (args: ArgumentsCamelCase<ScheduleArgs>) => {
    if (args.status) {
      const report = await scheduleStatusReport(args.warehouse, new Date());
      process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report));
      return;
    }
    const { CronClock } = await import('../../config/index.js');
    const { nightRunner, Scheduler, ScheduleJournal, scheduleStatusFile } = await import('../../schedule/index.js');
    const { makeLogger } = await import('../logger.js');
    const { resolveTarget } = await import('../service-target.js');
    const { pipelines, broken } = await scheduledPipelines(args.dir);
    if (args.list) {
      process.stdout.write(formatList(pipelines, new Date(), args.count, CronClock));
      // A check for CI as well: an invalid file fails it.
      if (broken.length) throw new ConfigError(broken.flatMap((b) => b.issues));
      return;
    }
    const log = makeLogger(args['log-level'] ?? process.env.LOG_LEVEL ?? 'info');
    // Nothing valid to run and something invalid: fail at once (exit 2), so systemd shows it
    // failed rather than a scheduler that runs nothing. With one valid pipeline or more, an
    // invalid file is skipped and reported, and read again each minute.
    if (pipelines.length === 0 && broken.length) throw new ConfigError(broken.flatMap((b) => b.issues));
    if (pipelines.length === 0) {
      process.stderr.write(`no pipeline in ${args.dir} has a schedule: field; nothing to do.\n`);
      return;
    }
    // The nights' warehouse (and the journal in it) is checked now, not at the first night.
    await makeDirs(args.warehouse, 0o700).catch((err: unknown) => {
      throw pathError(
        err,
        `--warehouse ${args.warehouse}`,
        'Pass a folder you can write (it is made when missing, in a folder that is there).',
      );
    });
    const journal = new ScheduleJournal(join(args.warehouse, 'schedule', 'events.ndjson'));
    const scheduler = new Scheduler({
      pipelines,
      broken,
      reload: () => scheduledPipelines(args.dir),
      statusFile: scheduleStatusFile(args.warehouse),
      now: () => new Date(),
      journal,
      log,
      run: nightRunner({
        warehouseDir: args.warehouse,
        log,
        lakeFlag: args.lake,
        target: async () => {
          const t = await resolveTarget(process.env, {
            announce: (line) => log.info(line),
            stateDir: join(args.warehouse, 'sandbox'),
          });
          return {
            baseUrl: t.baseUrl,
            apiKey: t.apiKey,
            close: t.sandbox ? () => t.sandbox!.close() : undefined,
            pollIntervalMs: t.sandbox ? 250 : 30_000,
          };
        },
      }),
    });
    log.info({ pipelines: pipelines.map((p) => `${p.name} (${p.schedule} ${p.timezone})`) }, 'scheduler started');
    await scheduler.startUp();
    await scheduler.writeStatus();
    scheduler.runForever();
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    log.info('stopping: finishing calls in flight and saving state');
    await scheduler.stop();
  },
};

function formatList(pipelines: readonly ScheduledPipeline[], now: Date, count: number, CronClock: typeof CronClockType): string {
  if (pipelines.length === 0) return 'no scheduled pipelines\n';
  const lines: string[] = [];
  for (const p of pipelines) {
    const clock = new CronClock(p.schedule, p.timezone);
    lines.push(`${p.name}  '${p.schedule}' ${p.timezone}  (${p.file})`);
    for (const d of clock.next(now, count)) lines.push(`  ${d.toISOString()}  ${clock.localKey(d)} ${p.timezone}`);
  }
  return `${lines.join('\n')}\n`;
}

/** What `pipeline schedule --status` shows: the status file and the journal, read without the warehouse's lock. */
export interface ScheduleStatusReport {
  alive: boolean;
  pid: number | null;
  heartbeat: string | null;
  startedAt: string | null;
  pipelines: {
    name: string;
    schedule: string | null;
    nextTick: string | null;
    nextLocal: string | null;
    running: boolean;
    last: { event: string; state: string | null; exitCode: number | null; at: string; scheduledFor: string; runId: string | null } | null;
    missed: { event: string; scheduledFor: string; localTime: string; detail: string | null }[];
  }[];
  invalid: ScheduleStatus['invalid'];
}

/** Missed nights shown: those of the last 7 days. */
const MISSED_SHOWN_MS = 7 * 86_400_000;

export async function scheduleStatusReport(warehouse: string, now: Date): Promise<ScheduleStatusReport> {
  const { readScheduleStatus, scheduleStatusFile, schedulerAlive, ScheduleJournal } = await import('../../schedule/index.js');
  const status = await readScheduleStatus(scheduleStatusFile(warehouse));
  const events = await new ScheduleJournal(join(warehouse, 'schedule', 'events.ndjson')).events();
  const names = new Set<string>([
    ...(status?.pipelines.map((p) => p.name) ?? []),
    ...events.filter((e) => e.pipeline).map((e) => e.pipeline),
  ]);
  const pipelines = [...names].sort().map((name) => {
    const s = status?.pipelines.find((p) => p.name === name);
    const mine = events.filter((e) => e.pipeline === name);
    const last = [...mine].reverse().find((e) => e.event === 'finished' || e.event === 'failed');
    return {
      name,
      schedule: s ? `${s.schedule} ${s.timezone}` : null,
      nextTick: s?.nextTick ?? null,
      nextLocal: s?.nextLocal ?? null,
      running: s?.running ?? false,
      last: last ? lastResult(last) : null,
      // Missed (the scheduler was down: caught up at start-up) and skipped (the previous run still going: not run).
      missed: mine
        .filter((e) => (e.event === 'missed' || e.event === 'skipped') && now.getTime() - Date.parse(e.scheduledFor) < MISSED_SHOWN_MS)
        .map((e) => ({ event: e.event, scheduledFor: e.scheduledFor, localTime: e.localTime, detail: e.detail ?? null })),
    };
  });
  return {
    alive: status ? schedulerAlive(status, now) : false,
    pid: status?.pid ?? null,
    heartbeat: status?.heartbeat ?? null,
    startedAt: status?.startedAt ?? null,
    pipelines,
    invalid: status?.invalid ?? [],
  };
}

function lastResult(e: ScheduleEvent): NonNullable<ScheduleStatusReport['pipelines'][number]['last']> {
  return {
    event: e.event,
    state: e.detail ?? null,
    exitCode: e.exitCode ?? null,
    at: e.at,
    scheduledFor: e.scheduledFor,
    runId: e.runId || null,
  };
}

function formatStatus(r: ScheduleStatusReport): string {
  const lines: string[] = [];
  if (r.pid === null) lines.push('scheduler: no status file (never started with this --warehouse)');
  else lines.push(`scheduler: ${r.alive ? 'alive' : 'NOT RUNNING'}  pid ${r.pid}  heartbeat ${r.heartbeat}  started ${r.startedAt}`);
  for (const p of r.pipelines) {
    lines.push(`${p.name}  ${p.schedule ? `'${p.schedule}'` : '(not scheduled now)'}${p.running ? '  RUNNING' : ''}`);
    if (p.nextTick) lines.push(`  next:   ${p.nextTick}  (${p.nextLocal})`);
    const l = p.last;
    lines.push(
      l
        ? `  last:   ${l.event}  ${l.state ?? ''}  exit ${l.exitCode ?? '?'}  at ${l.at}  (night ${l.scheduledFor})${l.runId ? `  run ${l.runId}` : ''}`
        : '  last:   never ran',
    );
    for (const m of p.missed) lines.push(`  ${m.event.toUpperCase()}: ${m.localTime}  ${m.detail ?? ''}`);
  }
  for (const b of r.invalid) {
    lines.push(`INVALID ${b.file} (skipped):`);
    for (const i of b.issues) lines.push(`  ${i.file}:${i.line}:${i.column}  ${i.field || '(file)'}: ${i.rule}`);
  }
  return `${lines.join('\n')}\n`;
}
