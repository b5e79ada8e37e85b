import { resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { EtlError, ExitCode } from '../../errors.js';
import type { Reconciliation } from '../../ops/index.js';
import type { Warehouse } from '../../warehouse/index.js';
import { render } from '../render.js';
import { isCalendarDay } from '../option-checks.js';
import { requireWarehouse } from './status.js';

interface ReconcileArgs {
  warehouse: string[];
  day?: string;
  from?: string;
  to?: string;
  tz?: string;
  strict: boolean;
  json: boolean;
}

/** `pipeline reconcile`: the ledger(s) against the account's own figures, day by day; exit 1 when they differ. */
export const reconcileCommand: CommandModule<object, ReconcileArgs> = {
  command: 'reconcile',
  describe:
    "Compare the ledger with the account's user_data (spending, balance) day by day; list every difference of 0.0001 CNY or more. Finance usually wants --day yesterday",
  builder: (y: Argv) =>
    y
      .option('warehouse', {
        type: 'string',
        array: true,
        default: ['warehouse'],
        describe:
          'warehouse folder; give one per warehouse on the account (--warehouse a --warehouse b) to sum their ledgers: then a charge none of them knows is a discrepancy',
      })
      .option('day', { type: 'string', describe: 'the day to reconcile: yyyy-mm-dd, today (the default) or yesterday' })
      .option('from', { type: 'string', describe: 'first day of a range (yyyy-mm-dd, today, yesterday); with --to' })
      .option('to', { type: 'string', describe: 'last day of the range, inclusive (default: the --from day)' })
      .option('tz', {
        type: 'string',
        describe:
          "IANA time zone of the days (Europe/Berlin); default the account's own (user_data.timezone). The account's spending statistics are compared only for its current day in its own zone",
      })
      .option('strict', {
        type: 'boolean',
        default: false,
        describe: "this warehouse is the account's only client: a charge its ledger does not know is a discrepancy (exit 1), not a note",
      })
      .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON, one entry per day' })
      .conflicts('day', ['from', 'to'])
      .epilog(
        [
          'Exit codes:',
          `  ${ExitCode.ok} the ledger and the account agree   ${ExitCode.failure} they differ (each difference is listed), or an unexpected error`,
          `  ${ExitCode.configInvalid} invalid options or no warehouse there   ${ExitCode.serviceUnavailable} service unavailable   ${ExitCode.auth} API key refused`,
          `  ${ExitCode.warehouseLocked} warehouse.duckdb held by another process past PIPELINE_LOCK_WAIT_SECONDS`,
          '',
          'One warehouse alone: a charge the account has that its ledger does not know is listed as "may be',
          "another warehouse's (or another tool's) charge\" and does not fail (exit 0). With several --warehouse,",
          "or --strict, the ledgers given are taken as all the account's clients: such a charge is a discrepancy (exit 1).",
          '',
          'Finance usually wants: pipeline reconcile --day yesterday',
        ].join('\n'),
      ) as Argv<ReconcileArgs>,
  handler: async (args: ArgumentsCamelCase<ReconcileArgs>) => {
    const { ServiceClient } = await import('../../client/index.js');
    const { isTimeZone, reconcileDays } = await import('../../ops/index.js');
    const { toMicros } = await import('../../post/index.js');
    const { Warehouse } = await import('../../warehouse/index.js');
    const { resolveTarget } = await import('../service-target.js');
    for (const [name, v] of [
      ['--day', args.day],
      ['--from', args.from],
      ['--to', args.to],
    ] as const)
      if (v !== undefined && v !== 'today' && v !== 'yesterday' && !isCalendarDay(v))
        throw new EtlError('ETL_CONFIG_INVALID', `${name} takes a calendar day written yyyy-mm-dd, today or yesterday; got '${v}'`);
    if (args.to !== undefined && args.from === undefined)
      throw new EtlError('ETL_CONFIG_INVALID', '--to needs --from (the first day of the range)');
    if (args.tz !== undefined && !isTimeZone(args.tz))
      throw new EtlError('ETL_CONFIG_INVALID', `--tz must be an IANA time zone name, like Europe/Berlin or UTC; got '${args.tz}'`);
    const dirs = [...new Map(args.warehouse.map((w) => [resolve(w), w])).values()];
    for (const d of dirs) requireWarehouse(d);
    const target = await resolveTarget(process.env, { announce: (l) => process.stderr.write(`${l}\n`) });
    const whs: Warehouse[] = [];
    try {
      const client = new ServiceClient({ baseUrl: target.baseUrl, apiKey: target.apiKey, land: async () => {} });
      for (const d of dirs) whs.push(await Warehouse.open(d));
      const complete = args.strict || dirs.length > 1;
      const days = await reconcileDays(whs, client, { from: args.day ?? args.from, to: args.day ?? args.to, tz: args.tz, complete });
      if (args.json) process.stdout.write(`${JSON.stringify(days, null, 2)}\n`);
      else {
        if (dirs.length > 1) process.stdout.write(`${dirs.length} warehouses on one account, their ledgers summed: ${dirs.join(', ')}\n`);
        for (const r of days) printDay(r, toMicros);
      }
      process.exitCode = days.some((r) => r.discrepancies.length > 0) ? 1 : 0;
    } finally {
      for (const wh of whs) wh.close();
      await target.sandbox?.close();
    }
  },
};

function printDay(r: Reconciliation, toMicros: (cny: string) => bigint): void {
  process.stdout.write(
    `${r.day} (${r.timezone}): ledger ${r.ledgerCny} CNY charged (${r.refundedCny} refunded), ` +
      `account ${r.accountCny === null ? 'statistics n/a' : `${r.accountCny} CNY`} over ${r.calls} ledger calls` +
      `${r.uncharged ? ` (${r.uncharged} sandbox calls, uncharged)` : ''}${r.balanceCny !== null ? `; balance now ${r.balanceCny} CNY` : ''}\n` +
      (r.statisticsNote ? `  ${r.statisticsNote}\n` : '') +
      (toMicros(r.unitemizedCny) > 0n
        ? `  of the ledger's charges, ${r.unitemizedCny} CNY went to /v1 (chat, embeddings), which the account's statistics do not itemize: checked by the balance only\n`
        : ''),
  );
  const table = (ds: Reconciliation['discrepancies']) =>
    render(
      ds.map((d) => ({ kind: d.kind, amount_cny: d.amountCny, api: d.api ?? '', request_id: d.requestId ?? '', detail: d.detail })),
      'table',
    );
  process.stdout.write(r.discrepancies.length === 0 ? 'no discrepancies\n' : table(r.discrepancies));
  if (r.unaccounted.length > 0)
    process.stdout.write(
      `${r.unaccounted.length} charge(s) of the account not in this ledger: may be another warehouse's (or another tool's) charge, not counted as discrepancies:\n` +
        table(r.unaccounted),
    );
  if (r.estimates.length > 0)
    process.stdout.write(
      `${r.estimates.length} charge(s) of the day are estimates (answers lost), counted above; confirm them with the service:\n` +
        render(
          r.estimates.map((e) => ({ call_id: e.callId, path: e.path, amount_cny: e.amountCny })),
          'table',
        ),
    );
}
