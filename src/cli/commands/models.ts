import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ExitCode } from '../../errors.js';
import { formatBuild, formatTests, runModels, testWarehouseModels } from '../../models/index.js';

interface ModelsArgs {
  action: string;
  warehouse: string;
  sql?: string;
  select?: string[];
  'full-refresh': boolean;
  test: boolean;
  json: boolean;
}

/** `pipeline models run|test`: build the SQL models in dependency order, or run their sidecar tests. */
export const modelsCommand: CommandModule<object, ModelsArgs> = {
  command: 'models <action>',
  describe: 'Build the SQL models (run) or check their sidecar tests (test)',
  builder: (y: Argv) =>
    y
      .positional('action', { type: 'string', choices: ['run', 'test'], demandOption: true, describe: 'run: build every model in dependency order; test: run every sidecar test' })
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder (DuckDB file, raw/, parquet/)' })
      .option('sql', { type: 'string', describe: 'models folder (default: the sql/ shipped with the tool)' })
      .option('select', { type: 'string', array: true, describe: 'only these models (and the models they read)' })
      .option('full-refresh', { type: 'boolean', default: false, describe: 'rebuild incremental models from scratch' })
      .option('test', { type: 'boolean', default: true, describe: 'after run, run the sidecar tests of the built models (--no-test to skip)' })
      .option('json', { type: 'boolean', default: false, describe: 'print the results as one JSON object on stdout' }) as Argv<ModelsArgs>,
  handler: async (args: ArgumentsCamelCase<ModelsArgs>) => {
    const json = (o: unknown) => `${JSON.stringify(o, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))}\n`;
    if (args.action === 'run') {
      const res = await runModels({
        warehouseDir: args.warehouse,
        sqlDir: args.sql,
        select: args.select,
        fullRefresh: args['full-refresh'],
        test: args.test,
        onModel: args.json ? undefined : (r) => process.stdout.write(`${formatBuild(r)}\n`),
      });
      if (args.json) process.stdout.write(json(res));
      else if (args.test) process.stdout.write(formatTests(res.tests));
      process.exitCode = res.ok ? ExitCode.ok : ExitCode.failure;
      return;
    }
    const tests = await testWarehouseModels({ warehouseDir: args.warehouse, sqlDir: args.sql, select: args.select });
    process.stdout.write(args.json ? json({ tests }) : formatTests(tests));
    process.exitCode = tests.every((t) => t.status === 'passed' || t.status === 'skipped') ? ExitCode.ok : ExitCode.failure;
  },
};
