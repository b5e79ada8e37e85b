import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ConfigError } from '../../errors.js';
import { makeDirs, pathError } from '../../paths.js';
import type { CronClock as CronClockType } from '../../config/cron-clock.js';
import type { ScheduledPipeline } from '../../run/scheduler.js';
import { checkOptions, num } from '../option-checks.js';

interface ScheduleArgs {
  dir: string;
  warehouse: string;
  list: boolean;
  count: number;
  'log-level'?: string;
  lake?: string;
}

/** Every pipeline file of a folder that has a `schedule:`; any invalid file stops start-up. */
export async function scheduledPipelines(dir: string): Promise<ScheduledPipeline[]> {
  const { loadPipeline } = await import('../../config/index.js');
  const names = await readdir(dir).catch((err: unknown) => {
    throw pathError(err, `schedule ${dir}`, 'Pass the folder that holds the pipeline files (default: pipelines).');
  });
  const files = names.filter((f) => /\.ya?ml$/.test(f)).sort();
  const out: ScheduledPipeline[] = [];
  const issues: ConfigError['issues'] = [];
  for (const f of files) {
    try {
      const p = await loadPipeline(join(dir, f));
      if (p.schedule) out.push({ name: p.name, file: join(dir, f), schedule: p.schedule, timezone: p.timezone });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      issues.push(...err.issues);
    }
  }
  if (issues.length) throw new ConfigError(issues);
  return out;
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
    const { CronClock } = await import('../../config/cron-clock.js');
    const { nightRunner } = await import('../../run/night-runner.js');
    const { ScheduleJournal } = await import('../../run/schedule-journal.js');
    const { Scheduler } = await import('../../run/scheduler.js');
    const { makeLogger } = await import('../logger.js');
    const { resolveTarget } = await import('../service-target.js');
    const pipelines = await scheduledPipelines(args.dir);
    if (args.list) {
      process.stdout.write(formatList(pipelines, new Date(), args.count, CronClock));
      return;
    }
    const log = makeLogger(args['log-level'] ?? process.env.LOG_LEVEL ?? 'info');
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
