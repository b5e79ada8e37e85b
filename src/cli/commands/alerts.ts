import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import type { StoredAlert } from '../../alerts/index.js';
import { EtlError } from '../../errors.js';
import { requireWarehouse } from './status.js';
import { isCalendarDay } from '../option-checks.js';

interface AlertsArgs {
  action?: string;
  file?: string;
  warehouse: string;
  since?: string;
  pipeline?: string;
  json: boolean;
}

/** `pipeline alerts`: the alerts made by runs and whether each was delivered; `alerts test FILE` sends a sample. */
export const alertsCommand: CommandModule<object, AlertsArgs> = {
  command: 'alerts [action] [file]',
  describe: "List alerts and their delivery state, or send a sample message to a pipeline's webhook (alerts test FILE)",
  builder: (y: Argv) =>
    y
      .positional('action', { type: 'string', choices: ['list', 'test'], describe: 'list (default) or test' })
      .positional('file', { type: 'string', describe: 'with test: the pipeline file whose alerts.webhook gets the sample' })
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder' })
      .option('since', { type: 'string', describe: 'only alerts checked or made on or after this UTC day, yyyy-mm-dd' })
      .option('pipeline', { type: 'string', describe: 'only this pipeline' })
      .option('json', { type: 'boolean', default: false, describe: 'print a JSON array' }) as Argv<AlertsArgs>,
  handler: async (args: ArgumentsCamelCase<AlertsArgs>) => {
    const { AlertStore, sendSampleAlert } = await import('../../alerts/index.js');
    const { loadPipeline } = await import('../../config/index.js');
    const { withWarehouse } = await import('../../warehouse/index.js');
    if (args.action === 'test') {
      if (!args.file)
        throw new EtlError('ETL_CONFIG_INVALID', 'alerts test needs a pipeline file: pipeline alerts test pipelines/keywords.yaml');
      const p = await loadPipeline(args.file);
      if (!p.alerts) throw new EtlError('ETL_CONFIG_INVALID', `${args.file} has no alerts: block; add one with a webhook and rules`);
      const r = await sendSampleAlert({ pipeline: p.name, alerts: p.alerts, now: new Date() });
      if (!r.ok) throw new EtlError('ETL_SERVICE_UNAVAILABLE', `the sample alert was not accepted: ${r.error}`);
      process.stdout.write(
        `sample alert delivered (HTTP ${r.status})${p.alerts.secret_env ? `, signed with ${p.alerts.secret_env}` : ''}\n`,
      );
      return;
    }
    if (args.since !== undefined && !isCalendarDay(args.since))
      throw new EtlError('ETL_CONFIG_INVALID', `--since must be a calendar day written yyyy-mm-dd, like 2026-11-21; got '${args.since}'`);
    requireWarehouse(args.warehouse);
    const alerts = await withWarehouse(args.warehouse, (wh) => new AlertStore(wh).list({ since: args.since, pipeline: args.pipeline }));
    process.stdout.write(args.json ? `${JSON.stringify(alerts, null, 2)}\n` : formatAlerts(alerts));
  },
};

/** One line per alert (date, pipeline, rule, delivery), then its message. */
export function formatAlerts(alerts: readonly StoredAlert[]): string {
  if (alerts.length === 0) return 'no alerts\n';
  const lines = alerts.map((a) => {
    const state =
      a.deliveryState === 'delivered'
        ? `delivered ${a.deliveredAt ?? ''}`.trim()
        : `pending (${a.attempts} attempt${a.attempts === 1 ? '' : 's'}${a.lastError ? `: ${a.lastError}` : ''})`;
    return `${a.checkDate}  ${a.pipeline}  ${a.rule}  ${state}\n  ${a.message}`;
  });
  const pending = alerts.filter((a) => a.deliveryState === 'pending').length;
  return `${lines.join('\n')}\n${alerts.length} alert(s), ${pending} pending\n`;
}
