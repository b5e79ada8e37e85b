import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { DEFAULT_SANDBOX_KEY, startSandbox } from '../../sandbox/index.js';

interface SandboxArgs {
  port: number;
  host: string;
  seed: number;
  'ready-after': number;
  balance: string;
}

/** `pipeline sandbox`: the emulator alone, for other tools or a second terminal. */
export const sandboxCommand: CommandModule<object, SandboxArgs> = {
  command: 'sandbox',
  describe: 'Serve the built-in service emulator on a loopback port until interrupted',
  builder: (y: Argv) =>
    y
      .option('port', { type: 'number', default: 8787, describe: 'port to listen on (0 picks a free one)' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'loopback address to bind' })
      .option('seed', { type: 'number', default: 1, describe: 'seed of the simulated data' })
      .option('ready-after', { type: 'number', default: 2, describe: 'seconds until a posted task is ready' })
      .option('balance', { type: 'string', default: '1000.0000', describe: 'starting simulated balance in CNY (svc_live_ keys are charged against it)' }) as Argv<SandboxArgs>,
  handler: async (args: ArgumentsCamelCase<SandboxArgs>) => {
    const sb = await startSandbox({
      port: args.port,
      host: args.host,
      seed: args.seed,
      readyAfterMs: args['ready-after'] * 1000,
      balanceCny: args.balance,
    });
    process.stderr.write(
      `sandbox emulator listening on ${sb.url}\n` +
        `  try: SVC_API_KEY=${DEFAULT_SANDBOX_KEY} SVC_BASE_URL=${sb.url} npx pipeline run pipelines/keywords.yaml\n` +
        '  (svc_sandbox_ keys are never charged; svc_live_ keys simulate charges against the balance). Ctrl-C stops it.\n',
    );
    await new Promise<void>((resolveStop) => {
      const stop = () => resolveStop();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await sb.close();
  },
};
