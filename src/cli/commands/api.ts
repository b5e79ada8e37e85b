import { readFile } from 'node:fs/promises';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { EtlError } from '../../errors.js';
import { checkOptions, num } from '../option-checks.js';

interface ApiArgs {
  method: string;
  path: string;
  data?: string;
  seed?: number;
  warehouse: string;
}

/** The run id of `pipeline api` calls in raw/ and the ledger: `api-` and the UTC time, to the second. */
function apiRunId(at: Date): string {
  return `api-${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`;
}

/** Reads `--data`: inline JSON, or `@file.json`. */
async function readData(data: string | undefined): Promise<unknown> {
  if (data === undefined) return undefined;
  const text = data.startsWith('@') ? await readFile(data.slice(1), 'utf8') : data;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new EtlError('ETL_REQUEST_INVALID', `--data is not valid JSON (${(err as Error).message}); nothing was sent.`);
  }
}

/** `pipeline api METHOD PATH [--data JSON|@file]`: one call by hand, like `gh api`. */
export const apiCommand: CommandModule<object, ApiArgs> = {
  command: 'api <method> <path>',
  describe: 'Call one endpoint by hand: validates the body against the catalog, prints the response body (charge on stderr)',
  builder: (y: Argv) =>
    y
      .positional('method', { type: 'string', demandOption: true, describe: 'GET or POST' })
      .positional('path', { type: 'string', demandOption: true, describe: 'e.g. /v3/serp/engA/organic/live/advanced or /v1/embeddings' })
      .option('data', {
        type: 'string',
        describe: 'request body: JSON text, or @file.json (a /v3 body is an array of tasks; one object is wrapped)',
      })
      .option('seed', { type: 'number', describe: 'data seed of the built-in sandbox (only without SVC_API_KEY)' })
      .option('warehouse', {
        type: 'string',
        default: 'warehouse',
        describe: 'warehouse whose raw/ and ledger receive the call, as a run would land it',
      })
      .check(checkOptions({ seed: num({ integer: true, min: 0 }) })) as Argv<ApiArgs>,
  handler: async (args: ArgumentsCamelCase<ApiArgs>) => {
    const { exploreCall } = await import('../../client/index.js');
    const { RawLanding, withWarehouse } = await import('../../warehouse/index.js');
    const { resolveTarget } = await import('../service-target.js');
    const data = await readData(args.data);
    const say = (line: string) => process.stderr.write(`${line}\n`);
    const target = await resolveTarget(process.env, { seed: args.seed, announce: say });
    try {
      // Landed like every other call: the body in raw/, its charge in the ledger (pipeline 'api'),
      // so `pipeline reconcile` knows what a call by hand cost.
      const r = await withWarehouse(args.warehouse, async (wh) => {
        const landing = new RawLanding(wh, { runId: apiRunId(new Date()), pipeline: 'api' });
        return exploreCall(
          { baseUrl: target.baseUrl, apiKey: target.apiKey, land: landing.land, sending: landing.sending, notSent: landing.notSent },
          { method: args.method, path: args.path, data },
        );
      });
      for (const w of r.warnings) say(`warning: ${w}`);
      process.stdout.write(r.body.endsWith('\n') ? r.body : `${r.body}\n`);
      say(
        `HTTP ${r.httpStatus} · ${r.endpoint.id} · charge ${r.charge.chargeCny ?? '-'} CNY · request id ${r.charge.requestId ?? '-'}${r.charge.balanceCny ? ` · balance ${r.charge.balanceCny} CNY` : ''}`,
      );
      if (r.error) throw r.error;
    } finally {
      await target.sandbox?.close();
    }
  },
};
