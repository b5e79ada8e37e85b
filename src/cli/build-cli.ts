import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import yargs, { type Argv } from 'yargs';
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
import { EPILOG } from './epilog.js';
import { exitWithError, exitWithUsage } from './exit.js';

/**
 * The package's version (`pipeline --version`), for scripts and bug reports: from the nearest
 * `package.json` of this package above this file (the sources, or a build of them elsewhere).
 */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    try {
      const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (p.name === 'pipeline' && typeof p.version === 'string') return p.version;
    } catch {
      // none here: look further up
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}

/** camelCase of a dashed option name, as yargs also sets it. */
const camel = (k: string) => k.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/**
 * A usage error for an option given twice that takes one value (`--warehouse a --warehouse b`):
 * yargs hands such a value on as a list, which a command would not expect.
 */
function givenOnce(argv: Record<string, unknown>, options: { array?: string[]; alias?: Record<string, string[]> }): true | string {
  const lists = new Set<string>();
  for (const a of options.array ?? []) for (const k of [a, ...(options.alias?.[a] ?? [])]) lists.add(camel(k));
  for (const [k, v] of Object.entries(argv)) {
    if (k === '_' || k === '$0' || !Array.isArray(v) || lists.has(camel(k))) continue;
    return `--${k} was given ${v.length} times (${v.map(String).join(', ')}): give it once`;
  }
  return true;
}

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
    .check(givenOnce, true)
    .recommendCommands()
    .epilog(EPILOG)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .help()
    .version(packageVersion())
    .fail((msg, err) => {
      // A check that failed (givenOnce) comes as its message, not an Error: a usage error.
      if (err instanceof Error && err.name !== 'YError') exitWithError(err);
      exitWithUsage(msg);
    });
}
