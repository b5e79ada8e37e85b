import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ExitCode } from '../../errors.js';
import { checkFolder } from '../../paths.js';
import { checkOptions, num } from '../option-checks.js';

interface ModelsArgs {
  action: string;
  warehouse: string;
  sql?: string;
  select?: string[];
  'full-refresh': boolean;
  test: boolean;
  json: boolean;
  publish: boolean;
  model: string;
  dimensions: number;
}

/** `pipeline models run|test|cluster`: build the SQL models in dependency order, run their sidecar tests, or cluster the keywords; run and cluster publish what they changed. */
export const modelsCommand: CommandModule<object, ModelsArgs> = {
  command: 'models <action>',
  describe: 'Build the SQL models (run), check their sidecar tests (test), or cluster the keywords (cluster)',
  builder: (y: Argv) =>
    y
      .positional('action', {
        type: 'string',
        choices: ['run', 'test', 'cluster'],
        demandOption: true,
        describe:
          'run: build every model in dependency order; test: run every sidecar test; cluster: embed the collected keywords (/v1/embeddings, cached) and cluster them',
      })
      .option('model', { type: 'string', default: 'text-embedding-3-small', describe: 'embedding model for cluster' })
      .option('dimensions', { type: 'number', default: 256, describe: 'embedding dimensions for cluster (text-embedding-3-* only)' })
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder (DuckDB file, raw/, parquet/)' })
      .option('sql', { type: 'string', describe: 'models folder (default: the sql/ shipped with the tool)' })
      .option('select', { type: 'string', array: true, describe: 'only these models (and the models they read)' })
      .option('full-refresh', { type: 'boolean', default: false, describe: 'rebuild incremental models from scratch' })
      .option('test', {
        type: 'boolean',
        default: true,
        describe: 'after run, run the sidecar tests of the built models (--no-test to skip)',
      })
      .option('publish', {
        type: 'boolean',
        default: true,
        describe:
          'after run or cluster, publish what changed to parquet/ and serving.duckdb, as a run does, so BI tools see it (--no-publish to skip; the lake gets it with `pipeline lake sync` or the next run)',
      })
      .option('json', { type: 'boolean', default: false, describe: 'print the results as one JSON object on stdout' })
      .check(checkOptions({ dimensions: num({ integer: true, min: 1 }) })) as Argv<ModelsArgs>,
  handler: async (args: ArgumentsCamelCase<ModelsArgs>) => {
    if (args.sql)
      await checkFolder(args.sql, `--sql ${args.sql}`, 'Pass the folder of model .sql files, or leave --sql out for the shipped sql/.');
    const { runClusters } = await import('../../run/index.js');
    const { formatBuild, formatTests, runModels, testWarehouseModels } = await import('../../models/index.js');
    const { resolveTarget } = await import('../service-target.js');
    const json = (o: unknown) => `${JSON.stringify(o, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))}\n`;
    if (args.action === 'cluster') {
      const target = await resolveTarget(process.env, { announce: (l) => process.stderr.write(`${l}\n`) });
      try {
        const r = await runClusters({
          warehouseDir: args.warehouse,
          baseUrl: target.baseUrl,
          apiKey: target.apiKey,
          model: args.model,
          dimensions: args.dimensions,
        });
        // The calls are in the ledger now: spend_daily is rebuilt from it, as a run's models step would.
        const spend = await runModels({ warehouseDir: args.warehouse, select: ['spend_daily'], test: false });
        const published = args.publish ? await publishNow(args.warehouse) : null;
        process.stdout.write(
          args.json
            ? json({ ...r, spendDailyRebuilt: spend.ok, published })
            : `${r.keywords} keywords in ${r.clusters} clusters (silhouette ${r.silhouette.toFixed(3)}); embedded ${r.embeddedNow} now, ${r.fromCache} from the cache; ${r.embedCalls} embedding and ${r.labelCalls} label calls (ledger run ${r.runId})\n` +
                `tables: keyword_clusters, keyword_cluster_summary; spend_daily ${spend.ok ? 'rebuilt' : 'FAILED to rebuild: run `pipeline models run`'}\n` +
                publishedLine(published),
        );
        if (!spend.ok) process.exitCode = ExitCode.failure;
      } finally {
        await target.sandbox?.close();
      }
      return;
    }
    if (args.action === 'run') {
      const res = await runModels({
        warehouseDir: args.warehouse,
        sqlDir: args.sql,
        select: args.select,
        fullRefresh: args['full-refresh'],
        test: args.test,
        onModel: args.json ? undefined : (r) => process.stdout.write(`${formatBuild(r)}\n`),
      });
      const published = args.publish ? await publishNow(args.warehouse) : null;
      if (args.json) process.stdout.write(json({ ...res, published }));
      else {
        if (args.test) process.stdout.write(formatTests(res.tests));
        process.stdout.write(publishedLine(published));
      }
      process.exitCode = res.ok ? ExitCode.ok : ExitCode.failure;
      return;
    }
    const tests = await testWarehouseModels({ warehouseDir: args.warehouse, sqlDir: args.sql, select: args.select });
    process.stdout.write(args.json ? json({ tests }) : formatTests(tests));
    process.exitCode = tests.every((t) => t.status !== 'failed' && t.status !== 'error') ? ExitCode.ok : ExitCode.failure;
  },
};

/** Publishes what the command changed (marts, clusters, spend): the run's own last step. */
async function publishNow(warehouse: string): Promise<{ seq: number; files: number; removed: number }> {
  const { publishStep } = await import('../../run/index.js');
  const { withWarehouse } = await import('../../warehouse/index.js');
  return withWarehouse(warehouse, (wh) => publishStep(wh, () => new Date()));
}

function publishedLine(p: { seq: number; files: number; removed: number } | null): string {
  return p ? `published ${p.files} files (${p.removed} replaced or removed); serving.duckdb is publish ${p.seq}\n` : '';
}
