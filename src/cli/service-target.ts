import { EtlError } from '../errors.js';
import { dirname } from 'node:path';
import { isPathError, pathError } from '../paths.js';
import { clockFrom, DEFAULT_SANDBOX_KEY, parseSandboxDate, startSandbox, type SandboxHandle } from '../sandbox/index.js';

export interface ServiceTarget {
  baseUrl: string;
  apiKey: string;
  /** Set when the built-in emulator was started for this command; close it when done. */
  sandbox?: SandboxHandle;
}

const KEY = /^svc_(live|sandbox)_\S+$/;

/**
 * Where calls go: `SVC_API_KEY` with `SVC_BASE_URL` (the real service or its sandbox
 * address), or, with no key, the built-in emulator started in-process on loopback. Its clock
 * starts at `PIPELINE_SANDBOX_DATE` when set (`YYYY-MM-DD` or an ISO instant; see
 * `clockFrom`), so a series of nights can be run with real date changes.
 */
export async function resolveTarget(
  env: NodeJS.ProcessEnv,
  opts: {
    seed?: number;
    announce: (line: string) => void;
    /**
     * Where the built-in emulator keeps its state (the warehouse's `sandbox/` folder for `pipeline
     * run` and `pipeline schedule`), so a run stopped and resumed finds the tasks it posted, as it
     * would on the service. Unset: in memory, forgotten at exit.
     */
    stateDir?: string;
  },
): Promise<ServiceTarget> {
  const key = env.SVC_API_KEY?.trim();
  if (!key) {
    const now = sandboxClock(env.PIPELINE_SANDBOX_DATE);
    const readyAfterMs = sandboxReadyAfterMs(env.PIPELINE_SANDBOX_READY_AFTER);
    let sandbox: SandboxHandle;
    try {
      sandbox = await startSandbox({
        seed: opts.seed,
        readyAfterMs,
        ...(now ? { now } : {}),
        ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
      });
    } catch (err) {
      if (!opts.stateDir) throw err;
      if (isPathError(err))
        throw pathError(err, `--warehouse ${dirname(opts.stateDir)}`, 'Pass a --warehouse folder that can be made and written.');
      throw new EtlError(
        'ETL_WAREHOUSE',
        `the built-in sandbox emulator could not read or write its state under ${opts.stateDir}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    const at = now ? `, its clock starting at ${now().toISOString()}` : '';
    const kept = sandbox.state
      ? `; its tasks and balance are kept in ${sandbox.state.path}${sandbox.state.restoredTasks ? ` (${sandbox.state.restoredTasks} task(s) of earlier runs known)` : ''}`
      : '';
    opts.announce(
      `SVC_API_KEY is not set: using the built-in sandbox emulator at ${sandbox.url}${at} (simulated data, nothing is charged)${kept}.`,
    );
    return { baseUrl: sandbox.url, apiKey: DEFAULT_SANDBOX_KEY, sandbox };
  }
  if (!KEY.test(key)) {
    throw new EtlError(
      'ETL_CONFIG_INVALID',
      'SVC_API_KEY does not look like a service key: it must start with svc_live_ or svc_sandbox_ followed by the key. Unset it to use the built-in sandbox.',
    );
  }
  const base = (key.startsWith('svc_sandbox_') ? (env.SVC_SANDBOX_URL ?? env.SVC_BASE_URL) : env.SVC_BASE_URL)?.trim();
  if (!base) {
    throw new EtlError(
      'ETL_CONFIG_INVALID',
      `SVC_API_KEY is set but ${key.startsWith('svc_sandbox_') ? 'SVC_SANDBOX_URL (or SVC_BASE_URL)' : 'SVC_BASE_URL'} is not: set it to the service's base address, e.g. https://api.example.com.`,
    );
  }
  if (!/^https?:\/\//.test(base)) {
    throw new EtlError('ETL_CONFIG_INVALID', `SVC_BASE_URL must be an http(s) address; got '${base}'.`);
  }
  checkBaseUrl(base, env);
  return { baseUrl: base, apiKey: key };
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost)$/i;

/**
 * Refuses, before anything is sent: an address holding a user name or password (`user:secret@`:
 * each run records its address, and the published `runs` table with it), and plain `http://`,
 * which sends the key (a Bearer header) in clear: allowed to this machine only, unless
 * `SVC_ALLOW_PLAIN_HTTP=1` says the user means it (a trusted network, a proxy).
 */
function checkBaseUrl(base: string, env: NodeJS.ProcessEnv): void {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new EtlError('ETL_CONFIG_INVALID', 'SVC_BASE_URL is not a valid address (it is not repeated here, in case it holds a secret).');
  }
  if (url.username || url.password) {
    throw new EtlError(
      'ETL_CONFIG_INVALID',
      `SVC_BASE_URL holds a user name or password before ${url.host}: every run would record it with the address. Give the address without them (the key goes in SVC_API_KEY). Nothing was sent.`,
    );
  }
  if (url.protocol !== 'http:' || LOOPBACK.test(url.hostname) || env.SVC_ALLOW_PLAIN_HTTP === '1') return;
  throw new EtlError(
    'ETL_CONFIG_INVALID',
    `SVC_BASE_URL is plain http to ${url.hostname}, which is not this machine: the API key would cross the network in clear. Use https://, or set SVC_ALLOW_PLAIN_HTTP=1 if you accept that. Nothing was sent.`,
  );
}

/** The built-in sandbox's delay from posting to done, from `PIPELINE_SANDBOX_READY_AFTER` (seconds; default 0.3). */
function sandboxReadyAfterMs(text: string | undefined): number {
  if (!text?.trim()) return 300;
  const s = Number(text.trim());
  if (!Number.isFinite(s) || s < 0) {
    throw new EtlError(
      'ETL_CONFIG_INVALID',
      `PIPELINE_SANDBOX_READY_AFTER must be a number of seconds (0 or more); got '${text}'. Unset it for the default 0.3 s.`,
    );
  }
  return s * 1000;
}

/** The built-in sandbox's clock for `PIPELINE_SANDBOX_DATE`, or none (real time) when unset. */
function sandboxClock(date: string | undefined): (() => Date) | undefined {
  if (!date?.trim()) return undefined;
  try {
    return clockFrom(parseSandboxDate(date));
  } catch (err) {
    throw new EtlError(
      'ETL_CONFIG_INVALID',
      `PIPELINE_SANDBOX_DATE: ${(err as Error).message}. Unset it to run the sandbox on today's date.`,
    );
  }
}
