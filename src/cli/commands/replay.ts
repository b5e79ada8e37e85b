import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ExitCode } from '../../errors.js';

interface ReplayArgs {
  warehouse: string;
  table?: string;
  json: boolean;
}

/** `pipeline replay [--table T]`: rebuild typed tables from the raw landing, no service call. */
export const replayCommand: CommandModule<object, ReplayArgs> = {
  command: 'replay',
  describe: 'Rebuild the typed tables from the raw landing alone (no call to the service), then rewrite their Parquet',
  builder: (y: Argv) =>
    y
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder (DuckDB file, raw/, parquet/)' })
      .option('table', { type: 'string', describe: 'rebuild only the result kind this table belongs to' })
      .option('json', { type: 'boolean', default: false, describe: 'print the report as one JSON object on stdout' }) as Argv<ReplayArgs>,
  handler: async (args: ArgumentsCamelCase<ReplayArgs>) => {
    const { compactRaw, publish, replay, withWarehouse } = await import('../../warehouse/index.js');
    const out = await withWarehouse(args.warehouse, async (wh) => {
      const compacted = await compactRaw(wh);
      const report = await replay(wh, args.table ? { table: args.table } : {});
      const tables = [...report.rows.keys()];
      await publish(wh, { rebuild: tables });
      return {
        kinds: report.kinds,
        rows: Object.fromEntries(report.rows),
        skippedFiles: report.skippedFiles,
        unparsed: report.unparsed.length,
        segments: compacted.segments,
      };
    });
    if (args.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else {
      for (const [t, n] of Object.entries(out.rows)) process.stdout.write(`${t.padEnd(48)} ${String(n).padStart(10)} rows\n`);
      for (const s of out.skippedFiles) process.stderr.write(`skipped unreadable raw file ${s.file}: ${s.error}\n`);
      if (out.unparsed > 0)
        process.stderr.write(
          `${out.unparsed} landed bodies are not JSON; they are kept in raw/ and listed in raw_responses (parsed = false)\n`,
        );
    }
    process.exitCode = out.skippedFiles.length > 0 ? ExitCode.partial : ExitCode.ok;
  },
};
