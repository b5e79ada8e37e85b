import { randomBytes } from 'node:crypto';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { checkOptions, num, parsedBy } from '../option-checks.js';
import type { SandboxHandle, SandboxOptions } from '../../sandbox/index.js';
// The emulator's option parsers, from their own small modules: `--help` and the checks load no server.
import { clockFrom, parseSandboxDate } from '../../sandbox/clock.js';
import { FAULT_PROFILES, parseFaultProfile } from '../../sandbox/faults/fault-profile.js';
import { parseRankProfiles } from '../../sandbox/rank-walk.js';
import { parseReadings } from '../../sandbox/readings.js';

interface SandboxArgs {
  port: number;
  host: string;
  seed: number;
  'ready-after': number;
  balance: string;
  faults: string;
  'time-scale': number;
  'live-key'?: string;
  'sandbox-key'?: string;
  admin: boolean;
  'rate-limits': boolean;
  drift?: number;
  date?: string;
  reading?: string;
  'rank-profile'?: string;
  state?: string;
}

/** The spec gives `<key>` no length or alphabet: anything but spaces after the prefix. */
const KEY = { live: /^svc_live_\S+$/, sandbox: /^svc_sandbox_\S+$/ };

/** The options of `startSandbox` for these arguments, and the keys it will accept (made up when not given). */
export function sandboxOptionsFromArgs(args: SandboxArgs): {
  options: SandboxOptions;
  liveKey: string;
  sandboxKey: string;
  /** Which keys were made up (printed); a key given on the command line is never echoed. */
  made: { live: boolean; sandbox: boolean };
} {
  const liveKey = args['live-key'] ?? `svc_live_${randomBytes(12).toString('hex')}`;
  const sandboxKey = args['sandbox-key'] ?? `svc_sandbox_${randomBytes(12).toString('hex')}`;
  if (!KEY.live.test(liveKey)) throw new Error('--live-key must look like svc_live_<key> (no spaces)');
  if (!KEY.sandbox.test(sandboxKey)) throw new Error('--sandbox-key must look like svc_sandbox_<key> (no spaces)');
  return {
    liveKey,
    sandboxKey,
    made: { live: args['live-key'] === undefined, sandbox: args['sandbox-key'] === undefined },
    options: {
      port: args.port,
      host: args.host,
      seed: args.seed,
      readyAfterMs: args['ready-after'] * 1000,
      balanceCny: args.balance,
      faults: parseFaultProfile(args.faults),
      timeScale: args['time-scale'],
      keys: [liveKey, sandboxKey],
      admin: args.admin,
      rateLimits: args['rate-limits'],
      ...(args.drift === undefined ? {} : { drift: args.drift }),
      ...(args.reading === undefined ? {} : { readings: parseReadings(args.reading) }),
      ...(args['rank-profile'] === undefined ? {} : { rankProfiles: parseRankProfiles(args['rank-profile']) }),
      ...(args.date !== undefined ? { now: clockFrom(parseSandboxDate(args.date)) } : {}),
      ...(args.state ? { stateDir: args.state } : {}),
    },
  };
}

/** The options of `pipeline sandbox`, with their help text. */
const SANDBOX_OPTIONS = {
  port: { type: 'number', default: 8787, describe: 'port to listen on (0 picks a free one)' },
  host: { type: 'string', default: '127.0.0.1', describe: 'loopback address to bind' },
  seed: { type: 'number', default: 1, describe: 'seed of the simulated data and of the faults' },
  state: {
    type: 'string',
    describe: 'folder where the emulator keeps its tasks, balance and calls, read back when started again (default: in memory)',
  },
  'ready-after': { type: 'number', default: 2, describe: 'seconds until a posted task is done (divided by --time-scale)' },
  balance: {
    type: 'string',
    default: '1000.0000',
    describe: 'starting simulated balance in CNY (svc_live_ keys are charged against it)',
  },
  faults: {
    type: 'string',
    default: 'none',
    describe: `fault profile: ${Object.keys(FAULT_PROFILES).join(', ')}, or field=rate pairs such as burst429=0.1,error5xx=0.05,drop=0.01,malformed=0.01,slow=0.01,slowMs=5000,taskFailure=0.05,callbackFailure=0.2,callbackDuplicate=0.01,reparse=0.1`,
  },
  'time-scale': {
    type: 'number',
    default: 1,
    describe: 'run rate-limit minutes and task delays this many times faster (60: a minute lasts a second)',
  },
  'live-key': {
    type: 'string',
    describe: 'the svc_live_ key to accept (charged against the balance); made up and printed when omitted',
  },
  'sandbox-key': {
    type: 'string',
    describe: 'the svc_sandbox_ key to accept (never charged); made up and printed when omitted',
  },
  admin: {
    type: 'boolean',
    default: false,
    describe: 'serve GET /__admin/stats (calls per family, tasks per tag, CNY charged)',
  },
  date: {
    type: 'string',
    describe:
      "start the emulator's clock at this date (YYYY-MM-DD, midnight UTC, or an ISO instant); it runs forward from there, so the data are that day's",
  },
  drift: {
    type: 'number',
    default: 0.05,
    describe: 'share of SERPs (0-1) served with forms real bodies have: an unseen item type, numbers as strings, other date forms',
  },
  'rank-profile': {
    type: 'string',
    describe:
      'place chosen domains by a rank distribution, their ranks walking from day to day: domain=top10/top11to30/beyond100 shares, comma-separated (mysite.example=0.4/0.2/0.4; the rest rank 31-100)',
  },
  reading: {
    type: 'string',
    describe:
      'where the spec is silent, which reading to serve (comma-separated; the first value is the default): refunds=task-cost|balance, rateLimitBody=http429|http200, asyncTasksPerPost=100|1, extraDepthPrice=0.75|1|0, clockSkew=0|<seconds, e.g. -120s>, aiCreatedStatus=20100|20000, aiZero=kept|removed, readyListPaging=1000|<1-1000>, postbackEncoding=gzip|gzip-bare|deflate (src/sandbox/readings.ts)',
  },
  'rate-limits': {
    type: 'boolean',
    default: true,
    describe: "enforce the spec's per-family rate limits with 429 (--no-rate-limits to turn off)",
  },
} as const;

/** What each option accepts: checked before the emulator starts. */
const SANDBOX_CHECKS: Parameters<typeof checkOptions>[0] = {
  port: num({ integer: true, min: 0, max: 65535 }),
  host: (v) =>
    /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/.test(String(v)) ? undefined : 'a loopback address: 127.0.0.1, ::1 or localhost',
  seed: num({ integer: true, min: 0 }),
  'ready-after': num({ min: 0 }),
  balance: (v) => (/^\d+(\.\d{1,4})?$/.test(String(v)) ? undefined : 'an amount in CNY such as 1000.0000'),
  faults: parsedBy(parseFaultProfile, `a profile (${Object.keys(FAULT_PROFILES).join(', ')}) or field=rate pairs`),
  'time-scale': num({ above: 0 }),
  drift: num({ min: 0, max: 1 }),
  'rank-profile': parsedBy(parseRankProfiles, 'domain=top10/top11to30/beyond100 shares such as mysite.example=0.4/0.2/0.4'),
  reading: parsedBy(parseReadings, 'name=value pairs such as refunds=balance,rateLimitBody=http200'),
  date: parsedBy(parseSandboxDate, 'a date YYYY-MM-DD (midnight UTC) or an ISO instant'),
  // The spec: a key of any length after its prefix is a key.
  'live-key': (v) => (/^svc_live_\S+$/.test(String(v)) ? undefined : 'a key starting svc_live_ followed by at least one character'),
  'sandbox-key': (v) =>
    /^svc_sandbox_\S+$/.test(String(v)) ? undefined : 'a key starting svc_sandbox_ followed by at least one character',
};

/** `pipeline sandbox`: the emulator alone, for other tools or a second terminal. */
export const sandboxCommand: CommandModule<object, SandboxArgs> = {
  command: 'sandbox',
  describe: 'Serve the built-in service emulator on a loopback port until interrupted',
  builder: (y: Argv) => y.options(SANDBOX_OPTIONS).check(checkOptions(SANDBOX_CHECKS)) as Argv<SandboxArgs>,
  handler: async (args: ArgumentsCamelCase<SandboxArgs>) => {
    const { startSandbox } = await import('../../sandbox/index.js');
    const { options, liveKey, sandboxKey, made } = sandboxOptionsFromArgs(args);
    const shown = (isMade: boolean, key: string) => (isMade ? `${key} (made up for this run)` : 'as given');
    const sb: SandboxHandle = await startSandbox(options);
    process.stderr.write(
      `sandbox emulator listening on ${sb.url}\n` +
        (made.live && made.sandbox
          ? `  accepted keys (made up for this run): live ${liveKey}  sandbox ${sandboxKey}\n`
          : !made.live && !made.sandbox
            ? '  accepting the keys given on the command line; any other key gets 401\n'
            : `  accepted keys: live ${shown(made.live, liveKey)}  sandbox ${shown(made.sandbox, sandboxKey)}; any other key gets 401\n`) +
        `  try: SVC_API_KEY=${made.sandbox ? sandboxKey : '<your sandbox key>'} SVC_BASE_URL=${sb.url} npx pipeline run pipelines/keywords.yaml\n` +
        (sb.state ? `  state: ${sb.state.path} (${sb.state.restoredTasks} task(s) known from before)\n` : '') +
        `  ${args.date !== undefined ? `clock: starts at ${options.now!().toISOString()}; ` : ''}faults: ${args.faults}; time scale: ${args['time-scale']}x; rate limits: ${args['rate-limits'] ? 'on' : 'off'}${args.reading ? `; readings: ${args.reading}` : ''}${args['rank-profile'] ? `; rank profiles: ${args['rank-profile']}` : ''}${args.admin ? `; admin view: ${sb.url}/__admin/stats` : ''}\n` +
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
