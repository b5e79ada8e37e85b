import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ExitCode } from '../../errors.js';
import type { Check } from '../../run/doctor.js';

interface DoctorArgs {
  warehouse: string;
  lake?: string;
  'callback-url'?: string;
  json: boolean;
}

const MARK: Record<Check['level'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' };

/** `pipeline doctor`: is this machine ready for a nightly run? */
export const doctorCommand: CommandModule<object, DoctorArgs> = {
  command: 'doctor',
  describe: 'Check the key, balance, limits, service status, warehouse, callback URL, clock and lake, one line each',
  builder: (y: Argv) =>
    y
      .option('warehouse', { type: 'string', default: 'warehouse', describe: 'warehouse folder to check' })
      .option('lake', { type: 'string', describe: 'object-storage lake to check, s3://bucket/prefix (default: PIPELINE_LAKE)' })
      .option('callback-url', { type: 'string', describe: 'public callback URL to check (push collection)' })
      .option('json', { type: 'boolean', default: false, describe: 'print the checks as JSON' })
      .epilog(
        [
          'Exit codes:',
          `  ${ExitCode.ok} no check failed (warnings are listed)   ${ExitCode.failure} some check failed: each FAIL line says what to do`,
          `  ${ExitCode.configInvalid} invalid options (a malformed lake address, key or service address)`,
        ].join('\n'),
      ) as Argv<DoctorArgs>,
  handler: async (args: ArgumentsCamelCase<DoctorArgs>) => {
    const { resolveLake } = await import('../../config/index.js');
    const { runDoctor } = await import('../../run/doctor.js');
    const { resolveTarget } = await import('../service-target.js');
    const target = await resolveTarget(process.env, { announce: (l) => process.stderr.write(`${l}\n`) });
    let checks: Check[];
    try {
      const lakeUrl = resolveLake({ flag: args.lake, env: process.env });
      checks = await runDoctor({
        baseUrl: target.baseUrl,
        apiKey: target.apiKey,
        warehouseDir: args.warehouse,
        callbackUrl: args['callback-url'],
        lakeUrl,
        env: process.env,
      });
    } finally {
      await target.sandbox?.close();
    }
    if (args.json) process.stdout.write(`${JSON.stringify(checks, null, 2)}\n`);
    else {
      const w = Math.max(...checks.map((c) => c.name.length));
      for (const c of checks) {
        process.stdout.write(`${MARK[c.level]}  ${c.name.padEnd(w)}  ${c.detail}\n`);
        if (c.level !== 'ok' && c.fix) process.stdout.write(`      ${' '.repeat(w)}  → ${c.fix}\n`);
      }
    }
    process.exitCode = checks.some((c) => c.level === 'fail') ? 1 : 0;
  },
};
