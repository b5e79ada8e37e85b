import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { EtlError, ExitCode } from '../../errors.js';
import type { RunStore as RunStoreType } from '../../warehouse/index.js';

interface LakeArgs {
  action: 'sync' | 'check';
  lake?: string;
  pipeline?: string;
  warehouse: string;
  json: boolean;
}

/**
 * `pipeline lake sync|check`: mirror the published layout to the lake now (repair after a
 * failed or interrupted upload; a run does it itself), or only check the lake is usable.
 */
export const lakeCommand: CommandModule<object, LakeArgs> = {
  command: 'lake <action>',
  describe:
    'Mirror parquet/ and serving.duckdb to the object-storage lake (sync), or check the lake answers and accepts the credentials (check)',
  builder: (y: Argv) =>
    y
      .positional('action', {
        type: 'string',
        choices: ['sync', 'check'] as const,
        demandOption: true,
        describe: 'sync: upload what is new or changed, then delete what is gone; check: list, put and delete a probe object',
      })
      .option('lake', { type: 'string', describe: 's3://bucket/prefix (default: PIPELINE_LAKE, else the lake: of --pipeline)' })
      .option('pipeline', { type: 'string', describe: 'take the lake from this pipeline file' })
      .option('warehouse', {
        type: 'string',
        default: 'warehouse',
        describe: 'warehouse folder whose parquet/ and serving.duckdb are mirrored',
      })
      .option('json', { type: 'boolean', default: false, describe: 'print the outcome as JSON on stdout' }) as Argv<LakeArgs>,
  handler: async (args: ArgumentsCamelCase<LakeArgs>) => {
    const { loadPipeline, resolveLake } = await import('../../config/index.js');
    const { RunStore, withWarehouse } = await import('../../warehouse/index.js');
    const pipeline = args.pipeline ? await loadPipeline(args.pipeline) : undefined;
    const url = resolveLake({ flag: args.lake, env: process.env, pipeline });
    if (!url)
      throw new EtlError(
        'ETL_LAKE_CONFIG',
        'no lake named: pass --lake s3://bucket/prefix, set PIPELINE_LAKE, or give --pipeline with a lake: field',
      );
    // The AWS SDK takes over a second to load: only commands that use the lake pay for it.
    const lake = await import('../../lake/index.js');
    if (args.action === 'check') {
      const c = await lake.checkLake(url, process.env);
      process.stdout.write(
        args.json
          ? `${JSON.stringify(c)}\n`
          : `lake ${c.url} at ${c.endpoint ?? 'AWS S3'} (${c.region}): list, put and delete work (${c.ms} ms)\n`,
      );
      return;
    }
    // Held like a run holds it: no export, models run or run rewrites parquet/ under the upload.
    // A run that owed only its lake (its upload failed, or it was killed after its publish) is
    // finished by a sync that put every file up: its journal records the lake step done, so the
    // next `pipeline run` is a new night, not a rerun of it. A run that owes an earlier step
    // (models, alerts, publish) is left to `pipeline run`, which does those steps buying nothing.
    let runs: Awaited<ReturnType<typeof RunStoreType.lakeSynced>> = { finished: [], owing: [] };
    const sync = () => lake.syncLake(args.warehouse, url, { env: process.env });
    const out = existsSync(join(args.warehouse, 'warehouse.duckdb'))
      ? await withWarehouse(args.warehouse, async (wh) => {
          await wh.checkpoint();
          const o = await sync();
          if (o.failed.length === 0) runs = await RunStore.lakeSynced(wh, o.url, new Date());
          return o;
        })
      : await sync();
    process.stdout.write(
      args.json
        ? `${JSON.stringify({ ...out, runsFinished: runs.finished, runsOwing: runs.owing })}\n`
        : `${lake.formatLakeOutcome(out)}\n`,
    );
    if (!args.json) {
      for (const r of runs.finished) process.stdout.write(`run ${r}: its lake step is done; the run is finished\n`);
      for (const r of runs.owing)
        process.stderr.write(`run ${r.runId} still owes its ${r.steps.join(', ')}: 'pipeline run' finishes it, buying nothing\n`);
    }
    if (out.failed.length)
      process.exitCode = out.failed.some((f) => f.code === 'ETL_LAKE_UNREACHABLE') ? ExitCode.serviceUnavailable : ExitCode.failure;
  },
};
