import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { publish, withWarehouse } from '../../warehouse/index.js';

interface ExportArgs {
  warehouse: string;
  table?: string[];
  json: boolean;
}

/**
 * `pipeline export`: rewrite the Hive-partitioned Parquet copy of every table (or the named
 * ones) in full, for repair: the same crash-safe path as a run's publish, every partition.
 */
export const exportCommand: CommandModule<object, ExportArgs> = {
  command: 'export',
  describe: 'Rewrite parquet/<table>/date=<yyyy-mm-dd>/ for every table (or the named ones) so each equals its table',
  builder: (y: Argv) =>
    y
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder (DuckDB file, raw/, parquet/)' })
      .option('table', { type: 'string', array: true, describe: 'only these tables' })
      .option('json', { type: 'boolean', default: false, describe: 'print what was written as JSON on stdout' }) as Argv<ExportArgs>,
  handler: async (args: ArgumentsCamelCase<ExportArgs>) => {
    const out = await withWarehouse(args.warehouse, (wh) => publish(wh, { rebuild: args.table ?? 'all' }));
    const written = out.tables
      .filter((t) => t.files > 0)
      .map((t) => ({ table: t.table, rows: t.rows, files: t.files, dir: join(args.warehouse, 'parquet', t.table) }));
    if (args.json) process.stdout.write(`${JSON.stringify(written)}\n`);
    else for (const w of written) process.stdout.write(`${w.table.padEnd(48)} ${String(w.rows).padStart(10)} rows  ${w.dir}\n`);
  },
};
