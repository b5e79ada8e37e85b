import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { EtlError } from '../../errors.js';
import { runStatuses, type RunStatus } from '../../run/status.js';
import { withWarehouse } from '../../warehouse/index.js';
import { checkOptions, num } from '../option-checks.js';

interface StatusArgs {
  warehouse: string;
  run?: string;
  limit: number;
  json: boolean;
}

/** Fails with a clear message when the warehouse does not exist yet, instead of creating it. */
export function requireWarehouse(dir: string): void {
  if (!existsSync(join(dir, 'warehouse.duckdb'))) {
    throw new EtlError(
      'ETL_CONFIG_INVALID',
      `no warehouse at ${dir} (no warehouse.duckdb there); run a pipeline first or pass --warehouse DIR.`,
    );
  }
}

/** `pipeline status`: recent runs and what each did. */
export const statusCommand: CommandModule<object, StatusArgs> = {
  command: 'status',
  describe: 'Show recent runs: state, tasks, rows loaded, CNY charged, duration, why a run stopped',
  builder: (y: Argv) =>
    y
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder' })
      .option('run', { type: 'string', describe: 'one run id' })
      .option('limit', { type: 'number', default: 20, describe: 'how many recent runs' })
      .option('json', { type: 'boolean', default: false, describe: 'print a JSON array' })
      .check(checkOptions({ limit: num({ integer: true, min: 1 }) })) as Argv<StatusArgs>,
  handler: async (args: ArgumentsCamelCase<StatusArgs>) => {
    requireWarehouse(args.warehouse);
    const runs = await withWarehouse(args.warehouse, (wh) => runStatuses(wh, { runId: args.run, limit: args.limit }));
    if (args.run && runs.length === 0) throw new EtlError('ETL_CONFIG_INVALID', `no run ${args.run} in ${args.warehouse}`);
    process.stdout.write(args.json ? `${JSON.stringify(runs, null, 2)}\n` : formatStatuses(runs));
  },
};

export function formatStatuses(runs: readonly RunStatus[]): string {
  if (runs.length === 0) return 'no runs yet\n';
  return runs
    .map((r) => {
      const t = r.tasks;
      const lines = [
        `${r.runId}  ${r.pipeline}  ${r.state}  started ${r.startedAt}${r.durationS !== null ? `  ingest ${r.durationS.toFixed(1)} s` : ''}`,
        `  tasks ${t.planned} planned, ${t.posted} posted, ${t.collected} collected, ${t.failed} failed, ${t.waiting} waiting${t.unresolved ? `, ${t.unresolved} unresolved` : ''}`,
        `  rows ${r.rowsLoaded}  calls ${r.calls}  charged ${r.chargedCny} CNY`,
      ];
      if (r.stopReason) lines.push(`  stopped: ${r.stopReason}`);
      return lines.join('\n');
    })
    .join('\n\n')
    .concat('\n');
}
