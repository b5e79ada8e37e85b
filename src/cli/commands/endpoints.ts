import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';

interface EndpointsArgs {
  json: boolean;
  filter?: string;
}

/** `pipeline endpoints [--json] [--filter TEXT]`: the catalog, one endpoint a line. */
export const endpointsCommand: CommandModule<object, EndpointsArgs> = {
  command: 'endpoints',
  describe: 'List every endpoint of the catalog: method, path, mode, rate family, charged or free',
  builder: (y: Argv) =>
    y
      .option('json', { type: 'boolean', default: false, describe: 'one JSON array on stdout' })
      .option('filter', { type: 'string', describe: 'only ids or paths containing this text' }) as Argv<EndpointsArgs>,
  handler: async (args: ArgumentsCamelCase<EndpointsArgs>) => {
    const { ENDPOINTS, FAMILIES } = await import('../../catalog/index.js');
    const f = args.filter?.toLowerCase();
    const list = ENDPOINTS.filter((e) => !f || e.id.toLowerCase().includes(f) || e.path.toLowerCase().includes(f));
    if (args.json) {
      const rows = list.map((e) => ({
        id: e.id,
        method: e.method,
        path: e.path,
        mode: e.mode,
        ...(e.format ? { format: e.format } : {}),
        family: e.family,
        perMinute: FAMILIES[e.family].perMinute,
        charged: e.charged,
        callbacks: e.callbacks,
        ...(e.maxTasksPerPost !== undefined ? { maxTasksPerPost: e.maxTasksPerPost } : {}),
        ai: e.ai,
        ...(e.resultKind ? { resultKind: e.resultKind } : {}),
        ...(e.inferred ? { inferred: e.inferred } : {}),
      }));
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    const w = Math.max(...list.map((e) => e.path.length), 4);
    for (const e of list) {
      const flags = [e.charged ? 'charged' : 'free', e.mode, `${e.family} ${FAMILIES[e.family].perMinute}/min`, e.ai ? '.ai' : '']
        .filter(Boolean)
        .join(' · ');
      process.stdout.write(`${e.method.padEnd(4)} ${e.path.padEnd(w)}  ${flags}\n`);
    }
    process.stderr.write(`${list.length} endpoints\n`);
  },
};
