import yargs, { type Argv } from 'yargs';
import { ExitCode } from '../errors.js';
import { alertsCommand } from './commands/alerts.js';
import { apiCommand } from './commands/api.js';
import { doctorCommand } from './commands/doctor.js';
import { endpointsCommand } from './commands/endpoints.js';
import { exportCommand } from './commands/export.js';
import { lakeCommand } from './commands/lake.js';
import { ledgerCommand } from './commands/ledger.js';
import { modelsCommand } from './commands/models.js';
import { planCommand } from './commands/plan.js';
import { reconcileCommand } from './commands/reconcile.js';
import { replayCommand } from './commands/replay.js';
import { reportCommand } from './commands/report.js';
import { runCommand } from './commands/run.js';
import { sandboxCommand } from './commands/sandbox.js';
import { scheduleCommand } from './commands/schedule.js';
import { schemaCommand } from './commands/schema.js';
import { statusCommand } from './commands/status.js';
import { exitWithError } from './exit.js';

const EPILOG = `Environment:
  SVC_API_KEY      svc_live_... or svc_sandbox_... key; unset = built-in sandbox emulator
  SVC_BASE_URL     base address of the service (required with a key)
  SVC_SANDBOX_URL  base address for svc_sandbox_ keys (defaults to SVC_BASE_URL)
  LOG_LEVEL        pino log level on stderr (default warn; the scheduler: info)
  LOG_FORMAT       json or pretty (default: pretty on a terminal, JSON otherwise)
  PIPELINE_DUCKDB_MEMORY  DuckDB memory limit (default 4GB)
  PIPELINE_LIVE_CONCURRENCY  live calls in flight at once (default 4; the rate limits still apply)
  PIPELINE_LAKE    s3://bucket/prefix the published layout is mirrored to (docs/lake.md); with it:
  AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3) for a store other than AWS S3, AWS_REGION,
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or AWS_PROFILE
  PIPELINE_LOCK_WAIT_SECONDS  how long to wait for warehouse.duckdb held by another process (default 60), then exit ${ExitCode.warehouseLocked}
  PIPELINE_PUBLISH_COMPACT_FILES  files a Parquet partition may hold before it is compacted into one (default 8)
  PIPELINE_SERVING_KEEP_HOURS  how long files of older serving.duckdb snapshots stay for readers still holding one (default 24)
  PIPELINE_SANDBOX_DATE  start the built-in sandbox's clock at this date (YYYY-MM-DD or an ISO instant)

Exit codes:
  ${ExitCode.ok} done   ${ExitCode.failure} unexpected error   ${ExitCode.configInvalid} invalid pipeline or request (nothing was sent)
  ${ExitCode.partial} partial, run again to resume   ${ExitCode.budgetOrBalance} stopped at the budget or balance
  ${ExitCode.serviceUnavailable} service or lake unavailable   ${ExitCode.auth} API key or lake credentials refused
  ${ExitCode.warehouseLocked} warehouse.duckdb held by another process past PIPELINE_LOCK_WAIT_SECONDS (readers: open serving.duckdb)`;

/** The `pipeline` command line; `src/bin.ts` only parses it. */
export function buildCli(argv: string[]): Argv {
  return yargs(argv)
    .scriptName('pipeline')
    .usage('$0 <command> [options]\n\nLoad search data from the service into DuckDB and Parquet.')
    .command(runCommand)
    .command(planCommand)
    .command(modelsCommand)
    .command(reportCommand)
    .command(alertsCommand)
    .command(replayCommand)
    .command(exportCommand)
    .command(lakeCommand)
    .command(schemaCommand)
    .command(scheduleCommand)
    .command(statusCommand)
    .command(ledgerCommand)
    .command(reconcileCommand)
    .command(doctorCommand)
    .command(endpointsCommand)
    .command(apiCommand)
    .command(sandboxCommand)
    .demandCommand(
      1,
      'name a command: run, plan, models, report, alerts, replay, export, lake, schema, schedule, status, ledger, reconcile, doctor, endpoints, api or sandbox',
    )
    .strict()
    .recommendCommands()
    .epilog(EPILOG)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .help()
    .version(false)
    .fail((msg, err) => {
      if (err) exitWithError(err);
      process.stderr.write(`${msg}\nRun 'pipeline --help' for usage.\n`);
      process.exit(ExitCode.configInvalid);
    });
}
