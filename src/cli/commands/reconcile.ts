import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ExitCode } from '../../errors.js';
import { requireWarehouse } from './status.js';

interface ReconcileArgs {
  warehouse: string;
  json: boolean;
}

/** `pipeline reconcile`: the ledger against the account's own figures; exit 1 when they differ. */
export const reconcileCommand: CommandModule<object, ReconcileArgs> = {
  command: 'reconcile',
  describe: "Compare the ledger with the account's user_data (spending, balance); list every difference of 0.0001 CNY or more",
  builder: (y: Argv) =>
    y
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder' })
      .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON' })
      .epilog(
        [
          'Exit codes:',
          `  ${ExitCode.ok} the ledger and the account agree   ${ExitCode.failure} they differ (each difference is listed), or an unexpected error`,
          `  ${ExitCode.configInvalid} invalid options or no warehouse there   ${ExitCode.serviceUnavailable} service unavailable   ${ExitCode.auth} API key refused`,
          `  ${ExitCode.warehouseLocked} warehouse.duckdb held by another process past PIPELINE_LOCK_WAIT_SECONDS`,
        ].join('\n'),
      ) as Argv<ReconcileArgs>,
  handler: async (args: ArgumentsCamelCase<ReconcileArgs>) => {
    const { ServiceClient } = await import('../../client/index.js');
    const { toMicros } = await import('../../run/money.js');
    const { reconcile } = await import('../../run/reconcile.js');
    const { withWarehouse } = await import('../../warehouse/index.js');
    const { render } = await import('../render.js');
    const { resolveTarget } = await import('../service-target.js');
    requireWarehouse(args.warehouse);
    const target = await resolveTarget(process.env, { announce: (l) => process.stderr.write(`${l}\n`) });
    try {
      const client = new ServiceClient({ baseUrl: target.baseUrl, apiKey: target.apiKey, land: async () => {} });
      const r = await withWarehouse(args.warehouse, (wh) => reconcile(wh, client));
      if (args.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
      else {
        process.stdout.write(
          `${r.day} (${r.timezone}): ledger ${r.ledgerCny} CNY charged (${r.refundedCny} refunded), account ${r.accountCny} CNY over ${r.calls} ledger calls` +
            `${r.uncharged ? ` (${r.uncharged} sandbox calls, uncharged)` : ''}${r.balanceCny !== null ? `; balance now ${r.balanceCny} CNY` : ''}\n` +
            (toMicros(r.unitemizedCny) > 0n
              ? `of the ledger's charges, ${r.unitemizedCny} CNY went to /v1 (chat, embeddings), which the account's statistics do not itemize: checked by the balance only\n`
              : ''),
        );
        process.stdout.write(
          r.discrepancies.length === 0
            ? 'no discrepancies\n'
            : render(
                r.discrepancies.map((d) => ({
                  kind: d.kind,
                  amount_cny: d.amountCny,
                  api: d.api ?? '',
                  request_id: d.requestId ?? '',
                  detail: d.detail,
                })),
                'table',
              ),
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
      process.exitCode = r.discrepancies.length ? 1 : 0;
    } finally {
      await target.sandbox?.close();
    }
  },
};
