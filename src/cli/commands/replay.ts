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
    const { compactRaw, damagedNotes, publish, replay, withWarehouse } = await import('../../warehouse/index.js');
    const out = await withWarehouse(args.warehouse, async (wh) => {
      const { DEFAULT_SQL_DIR, ensurePublishedModelsRecorded } = await import('../../models/index.js');
      await ensurePublishedModelsRecorded(wh, DEFAULT_SQL_DIR);
      const compacted = await compactRaw(wh);
      const report = await replay(wh, args.table ? { table: args.table } : {});
      const tables = [...new Set([...report.rows.keys(), ...report.keptRows.keys()])];
      await publish(wh, { rebuild: tables });
      const damaged = [...compacted.damaged, ...report.damaged];
      return {
        kinds: report.kinds,
        rows: Object.fromEntries(report.rows),
        skippedFiles: report.skippedFiles,
        unparsed: report.unparsed.length,
        segments: compacted.segments,
        damaged: damaged.map((d) => ({
          file: d.file,
          error: d.error,
          keptAs: d.keptAs,
          salvaged: d.salvaged,
          answersRead: d.kept,
          lostTasks: d.lostTasks,
          refetch: d.refetch,
        })),
        keptTasks: report.keptTasks,
        keptRows: Object.fromEntries(report.keptRows),
        notes: damagedNotes(damaged),
      };
    });
    if (args.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else {
      for (const [t, n] of Object.entries(out.rows)) process.stdout.write(`${t.padEnd(48)} ${String(n).padStart(10)} rows\n`);
      for (const s of out.skippedFiles) process.stderr.write(`skipped unreadable raw file ${s.file}: ${s.error}\n`);
      for (const n of out.notes) process.stderr.write(`${n}\n`);
      for (const [t, n] of Object.entries(out.keptRows))
        process.stderr.write(
          `${t}: ${n} row(s) with no readable answer in raw/ kept as they were, not rebuilt (tasks: ${out.keptTasks.slice(0, 10).join(', ')}${out.keptTasks.length > 10 ? ` and ${out.keptTasks.length - 10} more` : ''})\n`,
        );
      if (out.damaged.length > 0)
        process.stderr.write(
          'damaged raw files were kept apart (*.damaged) and everything readable was rebuilt; restore a damaged file from a backup, or let the next `pipeline run` fetch its collected tasks again, then replay\n',
        );
      if (out.unparsed > 0)
        process.stderr.write(
          `${out.unparsed} landed bodies are not JSON; they are kept in raw/ and listed in raw_responses (parsed = false)\n`,
        );
    }
    process.exitCode =
      out.skippedFiles.length > 0 || out.damaged.length > 0 || Object.keys(out.keptRows).length > 0 ? ExitCode.partial : ExitCode.ok;
  },
};
