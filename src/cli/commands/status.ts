import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { EtlError } from '../../errors.js';
import type { RunStatus } from '../../ops/index.js';
import type { LiveRun } from '../../run/index.js';
import type { Warehouse } from '../../warehouse/index.js';
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
    const { runStatuses } = await import('../../ops/index.js');
    const { readLiveRun } = await import('../../run/index.js');
    const { Warehouse, withWarehouse } = await import('../../warehouse/index.js');
    requireWarehouse(args.warehouse);
    const read = (wh: Warehouse) => runStatuses(wh, { runId: args.run, limit: args.limit });
    // A run holds the database while it works: what it last wrote of itself is shown at once,
    // rather than waiting for it to end.
    const live = readLiveRun(args.warehouse);
    if (live && (!args.run || args.run === live.runId)) {
      let wh: Warehouse;
      try {
        wh = await Warehouse.open(args.warehouse, { waitSeconds: 0 });
      } catch (err) {
        if (!(err instanceof EtlError) || err.code !== 'ETL_WAREHOUSE_LOCKED') throw err;
        process.stdout.write(args.json ? `${JSON.stringify([{ live: true, ...live }], null, 2)}\n` : formatLive(live, new Date()));
        return;
      }
      try {
        process.stdout.write(args.json ? `${JSON.stringify(await read(wh), null, 2)}\n` : formatStatuses(await read(wh)));
      } finally {
        wh.close();
      }
      return;
    }
    const runs = await withWarehouse(args.warehouse, read);
    if (args.run && runs.length === 0) throw new EtlError('ETL_CONFIG_INVALID', `no run ${args.run} in ${args.warehouse}`);
    process.stdout.write(args.json ? `${JSON.stringify(runs, null, 2)}\n` : formatStatuses(runs) + (await readingsLine(args.warehouse)));
  },
};

/** What the runs follow of `pipeline doctor --probe`'s record, and its age (text only; `--json` keeps its array). */
async function readingsLine(dir: string): Promise<string> {
  const { readingsInUse } = await import('../../plan/index.js');
  const { readServiceReadings } = await import('../../warehouse/index.js');
  const record = await readServiceReadings(dir).catch((err: Error) => err);
  if (record === null) return '';
  if (record instanceof Error) return `\nservice readings: not used (${record.message})\n`;
  const r = readingsInUse(record, new Date());
  const used =
    Object.entries(r.used)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ') || 'none a run uses';
  return `\nservice readings (pipeline doctor --probe, ${r.probedAt}, ${r.ageDays} day(s) ago${r.old ? ': old, the service may have changed; run pipeline doctor --probe --yes' : ''}): ${used}\n`;
}

/** A run in progress, from its `run-live.json`, while it holds the database. */
export function formatLive(r: LiveRun, now: Date): string {
  const ago = Math.max(0, Math.round((now.getTime() - Date.parse(r.updatedAt)) / 1000));
  return [
    `${r.runId ?? '(run id not known yet)'}  ${r.pipeline}  running now (PID ${r.pid})  started ${r.startedAt}  step ${r.step}`,
    ...(r.progress ? [`  ${r.progress}`] : []),
    ...(r.note ? [`  last note: ${r.note}`] : []),
    `  updated ${ago} s ago`,
    '',
    'This run holds the warehouse until it ends: the other runs are shown then. Meanwhile serving.duckdb and parquet/ hold what the last run published.',
    '',
  ].join('\n');
}

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
