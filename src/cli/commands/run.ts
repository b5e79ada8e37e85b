import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import type { RunOutcome } from '../../run/index.js';
import { EPILOG } from '../epilog.js';
import { checkOptions, num } from '../option-checks.js';

interface RunArgs {
  file: string;
  warehouse: string;
  json: boolean;
  seed?: number;
  'poll-interval'?: number;
  'collect-timeout'?: number;
  collect?: 'auto' | 'pull' | 'push';
  listen?: string;
  'public-url'?: string;
  'log-level'?: string;
  'new-run': boolean;
  models: boolean;
  'time-scale': number;
  lake?: string;
}

/** `pipeline run FILE`: validate, plan, post, collect, load, print the summary. */
export const runCommand: CommandModule<object, RunArgs> = {
  command: 'run <file>',
  describe: 'Run a pipeline file: post its tasks, collect the results, load DuckDB and Parquet',
  builder: (y: Argv) =>
    y
      .positional('file', { type: 'string', demandOption: true, describe: 'pipeline YAML, e.g. pipelines/keywords.yaml' })
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder (DuckDB file, raw/, parquet/)' })
      .option('time-scale', {
        type: 'number',
        default: 1,
        describe:
          'divide the rate-limit minute and the default 30 s between polls by this, to match an emulator started with --time-scale (never for the real service)',
      })
      .option('models', { type: 'boolean', default: true, describe: 'build and test the SQL models after loading (--no-models to skip)' })
      .option('new-run', {
        type: 'boolean',
        default: false,
        describe: 'start a new run even if the last run of this pipeline is unfinished (default: resume it)',
      })
      .option('json', { type: 'boolean', default: false, describe: 'print the summary as one JSON object on stdout' })
      .option('seed', { type: 'number', describe: 'data seed of the built-in sandbox (only without SVC_API_KEY)' })
      .option('poll-interval', {
        type: 'number',
        describe: 'seconds between tasks_ready polls (default 30; 0.25 with the built-in sandbox)',
      })
      .option('collect-timeout', {
        type: 'number',
        describe:
          "seconds to wait for results before stopping (default: the file's collection.deadline_minutes, 30 min); the run stays resumable",
      })
      .option('collect', {
        type: 'string',
        choices: ['auto', 'pull', 'push'] as const,
        describe: "collection mode, overriding the file's collection.mode (push starts a callback server)",
      })
      .option('listen', {
        type: 'string',
        describe: 'callback server address host:port, overriding collection.listen (default 127.0.0.1:8787; port 0 for any free port)',
      })
      .option('public-url', {
        type: 'string',
        describe: 'where the service reaches the callback server, overriding collection.public_url (with auto, setting it means push)',
      })
      .option('lake', {
        type: 'string',
        describe:
          "s3://bucket/prefix to mirror parquet/ and serving.duckdb to after the run (default PIPELINE_LAKE, else the file's lake:; --lake '' for none); checked before anything is bought",
      })
      .option('log-level', {
        type: 'string',
        choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
        describe: 'pino log level on stderr (default: LOG_LEVEL or warn)',
      })
      .check(
        checkOptions({
          'time-scale': num({ above: 0 }),
          seed: num({ integer: true, min: 0 }),
          'poll-interval': num({ min: 0 }),
          'collect-timeout': num({ min: 0 }),
        }),
      )
      .epilog(EPILOG) as Argv<RunArgs>,
  handler: async (args: ArgumentsCamelCase<RunArgs>) => {
    const { loadPipeline, resolveLake } = await import('../../config/index.js');
    const { runExitCode, runPipeline } = await import('../../run/index.js');
    const { makeLogger } = await import('../logger.js');
    const { makeProgress } = await import('../progress.js');
    const { formatSummary } = await import('../format-summary.js');
    const { resolveTarget } = await import('../service-target.js');
    const pipeline = await loadPipeline(args.file);
    const say = (line: string) => process.stderr.write(`${line}\n`);
    // The built-in emulator keeps its state in the warehouse folder: a run stopped and resumed finds its tasks there.
    const target = await resolveTarget(process.env, { seed: args.seed, announce: say, stateDir: join(args.warehouse, 'sandbox') });
    let outcome: RunOutcome;
    const stopper = new AbortController();
    const onSignal = (sig: NodeJS.Signals) => {
      if (stopper.signal.aborted) process.exit(130); // a second Ctrl-C: stop now
      say(`${sig}: stopping after the calls in flight; state is saved and the run can be resumed (again to force).`);
      stopper.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      // The service's 30 s between polls runs faster against a time-scaled emulator too, as the rate limits do.
      const poll = args['poll-interval'] ?? (target.sandbox ? 0.25 : 30 / (args['time-scale'] > 0 ? args['time-scale'] : 1));
      outcome = await runPipeline({
        pipeline,
        file: args.file,
        warehouseDir: args.warehouse,
        baseUrl: target.baseUrl,
        apiKey: target.apiKey,
        logger: makeLogger(args['log-level']),
        pollIntervalMs: poll * 1000,
        ...(args['collect-timeout'] !== undefined ? { collectTimeoutMs: args['collect-timeout'] * 1000 } : {}),
        collection: { mode: args.collect, listen: args.listen, publicUrl: args['public-url'] },
        onProgress: args.json ? undefined : makeProgress(),
        newRun: args['new-run'],
        limits: args['time-scale'] > 0 && args['time-scale'] !== 1 ? { windowMs: 60_000 / args['time-scale'] } : undefined,
        signal: stopper.signal,
        models: args.models,
        lake: resolveLake({ flag: args.lake, env: process.env, pipeline }),
      });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await target.sandbox?.close();
    }
    process.stdout.write(args.json ? `${JSON.stringify(outcome)}\n` : formatSummary(outcome));
    if (outcome.models) {
      const m = outcome.models;
      say(
        `models: ${m.built} built, ${m.failed} failed, ${m.testsPassed}/${m.tests} tests passed${m.warned ? `, ${m.warned} warned` : ''}`,
      );
      // A warning (a SERP item type never seen before, its rows kept) is shown, and the run still exits 0.
      if (m.warnings) say(m.warnings);
      if (!m.ok) say(`${m.report}the data is loaded; fix the models and run 'pipeline models run'`);
    }
    if (outcome.lake) {
      const l = outcome.lake;
      say(
        'error' in l
          ? `lake: ${l.url}: ${l.error} (the next run or 'pipeline lake sync' uploads it)`
          : (await import('../../lake/index.js')).formatLakeOutcome(l),
      );
      if (outcome.lakeBehind)
        say(
          `run ${outcome.runId}: bought, loaded and published here; only the lake is behind. The next 'pipeline run' (or 'pipeline lake sync') syncs it first and buys nothing`,
        );
    }
    process.exitCode = runExitCode(outcome);
  },
};
