import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { EtlError } from '../../errors.js';
import { requireWarehouse } from './status.js';

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
    const { publish, publishedTables, withWarehouse } = await import('../../warehouse/index.js');
    requireWarehouse(args.warehouse);
    const out = await withWarehouse(args.warehouse, async (wh) => {
      const { DEFAULT_SQL_DIR, ensurePublishedModelsRecorded } = await import('../../models/index.js');
      await ensurePublishedModelsRecorded(wh, DEFAULT_SQL_DIR);
      // A name that is not a published table would rewrite nothing and look like success.
      const known = (await publishedTables(wh, new Date().toISOString().slice(0, 10))).map((t) => t.name);
      const unknown = (args.table ?? []).filter((t) => !known.includes(t));
      if (unknown.length > 0)
        throw new EtlError(
          'ETL_CONFIG_INVALID',
          `no published table named ${unknown.map((t) => `'${t}'`).join(', ')}; the published tables are ${known.join(', ')}`,
        );
      return publish(wh, { rebuild: args.table ?? 'all' });
    });
    const written = out.tables
      .filter((t) => t.files > 0)
      .map((t) => ({ table: t.table, rows: t.rows, files: t.files, dir: join(args.warehouse, 'parquet', t.table) }));
    if (args.json) process.stdout.write(`${JSON.stringify(written)}\n`);
    else for (const w of written) process.stdout.write(`${w.table.padEnd(48)} ${String(w.rows).padStart(10)} rows  ${w.dir}\n`);
  },
};
