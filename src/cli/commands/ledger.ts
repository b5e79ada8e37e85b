import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { EtlError } from '../../errors.js';
import { checkOutFile, pathError } from '../../paths.js';
import type { LedgerGrouping } from '../../ops/index.js';
import type { ServingReader, Warehouse } from '../../warehouse/index.js';
import { requireWarehouse } from './status.js';
import { isCalendarDay } from '../option-checks.js';

interface LedgerArgs {
  warehouse: string;
  from?: string;
  to?: string;
  by?: LedgerGrouping[];
  tz: string;
  calls: boolean;
  format: 'table' | 'csv' | 'json' | 'parquet';
  out?: string;
}

/** `pipeline ledger`: every call and what it cost, for finance. */
export const ledgerCommand: CommandModule<object, LedgerArgs> = {
  command: 'ledger',
  describe:
    'Print the cost ledger in CNY from the charge headers: a summary by day and endpoint with a total (the default table), one row per HTTP call (--calls, csv, json, parquet), or grouped (--by)',
  builder: (y: Argv) =>
    y
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder' })
      .option('from', { type: 'string', describe: 'first day (in --tz), yyyy-mm-dd' })
      .option('to', { type: 'string', describe: 'last day (in --tz), yyyy-mm-dd (inclusive)' })
      .option('by', {
        choices: ['day', 'pipeline', 'endpoint', 'run', 'depth_reason'] as const,
        array: true,
        describe:
          "group and sum; give several for several keys (--by day --by pipeline). depth_reason: the reason of depth: auto tasks (auto:seen, auto:shallow, auto:sweep, auto:escalation; '' for a fixed depth), each POST's charge shared by its tasks' units of depth",
      })
      .option('tz', {
        type: 'string',
        default: 'UTC',
        describe: 'IANA time zone of the days and local times (Europe/Berlin); the ledger does not ask the account for its own',
      })
      .option('calls', { type: 'boolean', default: false, describe: 'one row per call (and per refund) in the table too' })
      .option('format', {
        choices: ['table', 'csv', 'json', 'parquet'] as const,
        default: 'table' as const,
        describe: 'output format; csv, json and parquet are one row per call unless --by',
      })
      .option('out', { type: 'string', describe: 'file to write (required for parquet)' }) as Argv<LedgerArgs>,
  handler: async (args: ArgumentsCamelCase<LedgerArgs>) => {
    const { isTimeZone, ledgerReport, ledgerSummary, ledgerToParquet } = await import('../../ops/index.js');
    const { Warehouse, readServing } = await import('../../warehouse/index.js');
    const { render } = await import('../render.js');
    for (const [name, v] of [
      ['--from', args.from],
      ['--to', args.to],
    ] as const) {
      if (v !== undefined && !isCalendarDay(v))
        throw new EtlError('ETL_CONFIG_INVALID', `${name} must be a calendar day written yyyy-mm-dd, like 2026-11-21; got '${v}'`);
    }
    if (args.from !== undefined && args.to !== undefined && args.from > args.to)
      throw new EtlError('ETL_CONFIG_INVALID', `--from ${args.from} is after --to ${args.to}: no day is in that range; swap them`);
    if (!isTimeZone(args.tz))
      throw new EtlError('ETL_CONFIG_INVALID', `--tz must be an IANA time zone name, like Europe/Berlin or UTC; got '${args.tz}'`);
    if (args.calls && args.by?.length)
      throw new EtlError('ETL_CONFIG_INVALID', '--calls and --by do not go together: one row per call, or sums by key');
    if (args.format === 'parquet' && !args.out) throw new EtlError('ETL_CONFIG_INVALID', '--format parquet needs --out FILE');
    if (args.out) await checkOutFile(args.out, `--out ${args.out}`);
    requireWarehouse(args.warehouse);
    const q = { from: args.from, to: args.to, by: args.by, tz: args.tz };
    const summary = args.format === 'table' && !args.calls && !args.by?.length;
    const report = async (db: ServingReader) => {
      if (args.format === 'parquet') {
        await ledgerToParquet(db, q, args.out!);
        process.stderr.write(`wrote ${args.out}\n`);
        return;
      }
      const text = render(summary ? await ledgerSummary(db, q) : await ledgerReport(db, q), args.format);
      if (args.out) {
        const { writeFile } = await import('node:fs/promises');
        await writeFile(args.out, text).catch((err: unknown) => {
          throw pathError(err, `--out ${args.out}`, 'Pass a file in a folder you can write.');
        });
      } else process.stdout.write(text);
    };
    // A run holds the warehouse for its whole night: finance reads the ledger as last published
    // (serving.duckdb) at once rather than wait for it, and is told so. Before a first publish,
    // it waits as any command does.
    let wh: Warehouse;
    try {
      wh = await Warehouse.open(args.warehouse, { waitSeconds: 0 });
    } catch (err) {
      if (!(err instanceof EtlError) || err.code !== 'ETL_WAREHOUSE_LOCKED') throw err;
      const served = await readServing(args.warehouse, async (db, p) => {
        const holder = (err.context as { holder?: string } | undefined)?.holder ?? 'another process';
        process.stderr.write(
          `warehouse.duckdb is held by ${holder}: this is the ledger as published at ${p.publishedAt} (publish ${p.seq}); calls made since are not in it. Run again once it has finished for every call.\n`,
        );
        await report(db);
        return true;
      });
      if (served) return;
      wh = await Warehouse.open(args.warehouse);
    }
    try {
      await report(wh);
    } finally {
      wh.close();
    }
  },
};
