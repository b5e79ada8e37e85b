import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ExitCode } from '../../errors.js';
import type { Check, ProbeOutcome } from '../../ops/index.js';

interface DoctorArgs {
  warehouse: string;
  lake?: string;
  'callback-url'?: string;
  json: boolean;
  probe: boolean;
  yes: boolean;
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
      .option('json', { type: 'boolean', default: false, describe: 'print the checks (or the probe) as JSON' })
      .option('probe', {
        type: 'boolean',
        default: false,
        describe:
          'find which reading the service follows where the spec allows several (refunds, clock, tasks a POST, ready list, .ai codes) and record it in WAREHOUSE/service-readings.json; states its cost (at most 0.05 CNY) and spends it only with --yes',
      })
      .option('yes', { type: 'boolean', default: false, describe: 'with --probe: make the one charged call the plan states' })
      .epilog(
        [
          'Exit codes:',
          `  ${ExitCode.ok} no check failed (warnings are listed)   ${ExitCode.failure} some check failed: each FAIL line says what to do`,
          `  ${ExitCode.configInvalid} invalid options (a malformed lake address, key or service address)`,
        ].join('\n'),
      ) as Argv<DoctorArgs>,
  handler: async (args: ArgumentsCamelCase<DoctorArgs>) => {
    if (args.probe) return probeHandler(args);
    const { resolveLake } = await import('../../config/index.js');
    const { runDoctor } = await import('../../ops/index.js');
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

/** Run id of the probe's calls in raw/ and the ledger: `doctor-probe-` and the UTC time, to the second. */
function probeRunId(at: Date): string {
  return `doctor-probe-${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`;
}

/** `pipeline doctor --probe [--yes]`: the plan and its cost; with --yes the probe, its table and its record. */
async function probeHandler(args: ArgumentsCamelCase<DoctorArgs>): Promise<void> {
  const { PROBE_LIMIT_CNY, PROBE_PIPELINE, runProbe } = await import('../../ops/index.js');
  const { RawLanding, readServiceReadings, withWarehouse, writeServiceReadings } = await import('../../warehouse/index.js');
  const { resolveTarget } = await import('../service-target.js');
  let out: ProbeOutcome;
  let file: string | null = null;
  const last = existsSync(args.warehouse) ? await readServiceReadings(args.warehouse) : null;
  if (!args.yes) {
    // Nothing is called: the plan is priced from the ledger alone (read only when a warehouse exists).
    const hasWarehouse = existsSync(join(args.warehouse, 'warehouse.duckdb'));
    out = hasWarehouse
      ? await withWarehouse(args.warehouse, (wh) => runProbe({ baseUrl: '', apiKey: '', wh, last, yes: false }))
      : await runProbe({ baseUrl: '', apiKey: '', last, yes: false });
  } else {
    const target = await resolveTarget(process.env, { announce: (l) => process.stderr.write(`${l}\n`) });
    try {
      out = await withWarehouse(args.warehouse, async (wh) => {
        const landing = new RawLanding(wh, { runId: probeRunId(new Date()), pipeline: PROBE_PIPELINE });
        return runProbe({
          baseUrl: target.baseUrl,
          apiKey: target.apiKey,
          wh,
          last,
          land: landing.land,
          sending: landing.sending,
          notSent: landing.notSent,
          yes: true,
          pollMs: Number(process.env.PIPELINE_PROBE_POLL_MS ?? 15_000),
        });
      });
    } finally {
      await target.sandbox?.close();
    }
    if (out.record) file = await writeServiceReadings(args.warehouse, out.record);
  }
  const { plan, record } = out;
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ plan, record, file }, null, 2)}\n`);
    return;
  }
  const say = (l: string) => process.stdout.write(`${l}\n`);
  const price =
    plan.baseSource === 'ledger'
      ? `a SERP task of 10 results at ${plan.baseCny.toFixed(4)} CNY, from the ledger or the last probe`
      : `a SERP task of 10 results at ${plan.baseCny.toFixed(4)} CNY, the spec's reference (the ledger knows no price yet)`;
  say(`probe plan (${price}; each further block of 10 at 75% of it):`);
  for (const c of plan.calls) say(`  ${c.charged ? `${c.cny.toFixed(4)} CNY` : 'free      '}  ${c.call}`);
  say(`stated cost: at most ${plan.costCny.toFixed(4)} CNY (limit 0.05 CNY); unused depth is refunded`);
  if (plan.costCny > PROBE_LIMIT_CNY) {
    say('over the limit at this price of a SERP task: the probe does not run');
    process.exitCode = 1;
    return;
  }
  if (!record) {
    say('nothing was called: run again with --yes to spend it');
    return;
  }
  const rows = Object.entries(record.readings).map(([k, v]) => [k, String(v.value), v.detail] as const);
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  say('');
  for (const [k, v, d] of rows) say(`${k.padEnd(w0)}  ${v.padEnd(w1)}  ${d}`);
  say('');
  say(`charged ${record.chargedCny} CNY · account ${record.account ?? '(no login)'} · ${record.probedAt} · recorded in ${file}`);
}
