import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { checkOutFile } from '../../paths.js';
import { DEFAULT_SCOPE } from '../../report/scope.js';
import { requireWarehouse } from './status.js';
import { checkOptions, num } from '../option-checks.js';

interface ReportArgs {
  out: string;
  warehouse: string;
  pipeline?: string[];
  'pipeline-file'?: string[];
  days: number;
  'top-keywords': number;
  competitors: number;
  json: boolean;
}

/** `pipeline report`: one self-contained HTML file of charts from the warehouse's models. */
export const reportCommand: CommandModule<object, ReportArgs> = {
  command: 'report',
  describe:
    'Write one self-contained HTML report (opens without network) from the models: ranks, visibility, search volume, clusters, spend',
  builder: (y: Argv) =>
    y
      .usage(
        '$0 report [--out report.html] [--warehouse DIR] [--pipeline NAME] [--pipeline-file FILE]\n\n' +
          'Reads rank_history, domain_visibility_daily, search_volume_trends, spend_daily and the keyword clusters ' +
          '(build them with `pipeline models run` and `pipeline models cluster`) and writes one HTML file with ' +
          'Chart.js inlined: rank lines per keyword for the tracked domains and their closest competitors, visibility ' +
          'per domain, search-volume trends and seasonality, a 2-D map of the keyword clusters, and spend per day and ' +
          'endpoint. The page filters by pipeline, location and domain. Tracked domains come from --pipeline-file (the ' +
          "serp jobs' track_domains), else the warehouse's tracked_domains table, else the top domains by visibility.",
      )
      .option('out', { type: 'string', default: 'report.html', describe: 'HTML file to write' })
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder' })
      .option('pipeline', { type: 'string', array: true, describe: 'only these pipelines (repeatable; default all)' })
      .option('pipeline-file', {
        type: 'string',
        array: true,
        describe: "pipeline files whose serp jobs' track_domains are the tracked domains (repeatable)",
      })
      .option('days', { type: 'number', default: DEFAULT_SCOPE.days, describe: 'last N check dates (and spend days) in the charts' })
      .option('top-keywords', {
        type: 'number',
        default: DEFAULT_SCOPE.topKeywords,
        describe: 'keywords with rank lines, by search volume (keeps the file small)',
      })
      .option('competitors', {
        type: 'number',
        default: DEFAULT_SCOPE.competitors,
        describe: 'closest competitors drawn beside the tracked domains',
      })
      .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON' })
      .check(
        checkOptions({
          days: num({ integer: true, min: 1 }),
          'top-keywords': num({ integer: true, min: 1 }),
          competitors: num({ integer: true, min: 0 }),
        }),
      ) as Argv<ReportArgs>,
  handler: async (args: ArgumentsCamelCase<ReportArgs>) => {
    await checkOutFile(args.out, `--out ${args.out}`, { makesFolders: true });
    const { buildReport } = await import('../../report/index.js');
    requireWarehouse(args.warehouse);
    const r = await buildReport({
      warehouseDir: args.warehouse,
      out: args.out,
      pipelines: args.pipeline,
      pipelineFiles: args['pipeline-file'],
      days: args.days,
      topKeywords: args['top-keywords'],
      competitors: args.competitors,
    });
    if (args.json) {
      process.stdout.write(`${JSON.stringify(r)}\n`);
      return;
    }
    const c = r.counts;
    process.stdout.write(
      `wrote ${r.out} (${(r.bytes / 1024).toFixed(0)} KB)\n` +
        `  rank lines for ${c.rankKeywords} keywords (${c.rankSeries} keyword-location series), ${c.visibilityDomains} domains in visibility, ` +
        `${c.volumeSeries} search-volume series, ${c.clusterPoints} keywords on the cluster map, ${c.spendRows} spend rows\n` +
        `  tracked domains: ${r.trackedSource}\n` +
        r.notes.map((n) => `  note: ${n}\n`).join(''),
    );
  },
};
