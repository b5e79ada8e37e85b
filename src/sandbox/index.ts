import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Dispatcher } from 'undici';
import type { FamilyId } from './spec/index.js';
import { SandboxAccount } from './account.js';
import { AdminStats } from './admin-stats.js';
import { CallbackDispatcher } from './callbacks.js';
import { completeDueTasks } from './depth-refund.js';
import { ErrorLog } from './error-log.js';
import { FaultInjector } from './faults/fault-injector.js';
import { parseFaultProfile, resolveFaultProfile, type FaultProfile } from './faults/fault-profile.js';
import { parseReadings, type ServedReadings } from './readings.js';
import { resolveRankProfiles, type RankProfile } from './rank-walk.js';
import { formatCny, parseCny } from './money.js';
import { SlidingWindowLimiter, specFamilyLimits } from './rate-limit.js';
import { createSandboxServer, type SandboxLogEntry } from './server.js';
import { mayBeRefunded } from './depth-refund.js';
import { persistStep, SandboxJournal, type JournalState } from './state-journal.js';
import { endpointById } from './spec/index.js';
import { TaskStore } from './task-store.js';
import { UsageLedger } from './usage.js';
import type { SandboxWorld } from './world.js';

export { clockFrom, parseSandboxDate } from './clock.js';
export { SAMPLE_TASK_ID } from './handlers/task-get.js';
export { serpTaskPriceUnits } from './pricing.js';
export type { SandboxLogEntry } from './server.js';
export { ADMIN_STATS_PATH } from './server.js';
export { FAULT_PROFILES, NO_FAULTS, parseFaultProfile, type FaultProfile } from './faults/fault-profile.js';
export type { AdminStatsBody } from './admin-stats.js';
export { DEFAULT_READINGS, parseReadings, READINGS, type ServedReadings } from './readings.js';
export { parseRankProfiles, type RankProfile } from './rank-walk.js';

/** A key the emulator accepts out of the box; sandbox keys are never charged. */
export const DEFAULT_SANDBOX_KEY = 'svc_sandbox_local';

/** How to run the emulator. Every source of variation (clock, seed) is passed in. */
export interface SandboxOptions {
  /** 0 or undefined picks a free port. */
  port?: number;
  /** Loopback only; default `127.0.0.1`. */
  host?: string;
  /** Default 1; all data (and faults) are deterministic for (seed, task params, UTC date). */
  seed?: number;
  /**
   * Share of SERPs (0 to 1) that drift from the usual shape as real bodies do: an item
   * type the published shapes do not list, numbers written as strings, other date forms
   * (serp-drift.ts). Which SERPs drift is deterministic for the seed. Default 0 here (so
   * a test's data are the usual shape unless it asks); `pipeline sandbox` serves 0.05.
   */
  drift?: number;
  /**
   * Rank distributions of chosen domains (rank-walk.ts): per domain, the shares of series
   * (keyword × location × language × device) it ranks 1-10, 11-30 and beyond 100 in (the
   * rest 31-100); its rank in each series walks from day to day around that distribution.
   * As an object or the CLI's text form `mysite.example=0.4/0.2/0.4`. Default none: every
   * domain ranks as the pool's sites do.
   */
  rankProfiles?: Record<string, RankProfile> | string;
  /** The clock; default `() => new Date()`. Tests advance it instead of sleeping. The `clockSkew` reading offsets it. */
  now?: () => Date;
  /** Starting simulated balance in CNY, default `'1000.0000'`. */
  balanceCny?: string;
  /** A posted task is done this long after posting, by `now`, before the time scale; default 300. */
  readyAfterMs?: number;
  /** Accepted keys; default any key matching `/^svc_(live|sandbox)_\S+$/` (any length after the prefix). */
  keys?: string[];
  /**
   * Faults to inject: a profile, or its text form (`flaky`, `burst429=0.2,drop=0.05`).
   * Default none.
   */
  faults?: Partial<FaultProfile> | string;
  /** Only calls whose path matches draw call faults (429 bursts, 5xx, slow, drop, malformed); default every call. */
  faultPaths?: RegExp;
  /**
   * How many times faster than real time the emulator runs its windows and delays: 60
   * makes a rate-limit minute, the ready delay and the 10-second callback rule 60 times
   * shorter. Default 1.
   */
  timeScale?: number;
  /**
   * Per-family rate limits (429 with `Retry-After`): `true` for the spec's Limits table,
   * an object to override some families, `false` (the default in-process, so long test
   * runs on a frozen clock are never throttled) for none.
   */
  rateLimits?: boolean | Partial<Record<FamilyId, number>>;
  /**
   * Most tasks a `task_post` POST takes (the spec contradicts itself: 1 or 100 in production);
   * tasks past it are answered 40006 and not charged. Default: the endpoint table's (100, readings.ts `asyncTasksPerPost`).
   */
  maxTasksPerPost?: number;
  /**
   * Which reading to serve where the spec is silent and the point is switchable (readings.ts
   * `ServedReadings`): `refunds`, `rateLimitBody`, `asyncTasksPerPost`, `extraDepthPrice`,
   * `clockSkew`, `aiCreatedStatus`, `aiZero`, `readyListPaging`, `postbackEncoding`; as an object
   * or the CLI's text form `refunds=balance,clockSkew=-120s`. Default: today's readings.
   */
  readings?: Partial<ServedReadings> | string;
  /** Serve `GET /__admin/stats` (calls per family, tasks per tag, CNY charged). Default false. */
  admin?: boolean;
  /** Deliver callbacks to non-loopback hosts too. Default false. */
  allowRemoteCallbacks?: boolean;
  /** HTTP dispatcher used for callbacks; undici's global one by default. */
  callbackDispatcher?: Dispatcher;
  /**
   * Most callbacks under way at once; the next is sent as soon as one is answered, so the
   * emulator sends as fast as the receiver takes them. Default: no bound (every due callback at once).
   */
  callbackConcurrency?: number;
  /**
   * Build each postback task's body (its result, JSON and gzip) in idle turns after its POST,
   * as it will be sent when the task is done, rather than at its send; a body that no longer
   * holds at the send (a re-parse, another reading) is built anew. The bodies are the same; the
   * emulator's work moves out of the time callbacks are sent in (`bench/push-capacity.ts`
   * measures the receiver, not the sender). Default false.
   */
  prebuildPostbacks?: boolean;
  /** Tasks whose built result the emulator holds (task-store.ts RESULTS_KEPT, 1,000); older ones are built again when needed. */
  resultsKept?: number;
  /**
   * A folder where the emulator keeps its state (tasks, their progress, balance, the calls it
   * charged) and reads it back when started again, so a process that ends does not take the
   * service's side of its tasks with it (state-journal.ts). Default: none, all in memory.
   */
  stateDir?: string;
}

/** A running emulator. */
export interface SandboxHandle {
  /** e.g. `http://127.0.0.1:41234`, no trailing slash. */
  url: string;
  port: number;
  close(): Promise<void>;
  /** every response sent: method, path, http status (0 = dropped by a fault), request id, charge CNY as string — lets tests compare the ledger with what was sent */
  readonly log: ReadonlyArray<SandboxLogEntry>;
  /** The simulated balance now (refunds of tasks done by now included), CNY with 4 decimals. */
  balanceCny(): string;
  /** Starts the callbacks of tasks done by now and waits for every callback under way (tests call this instead of sleeping). */
  flushCallbacks(): Promise<void>;
  /** Puts money on the simulated account (CNY), as a payment would after a 402. */
  topUp(cny: string): void;
  /** With `stateDir`: the journal file, and how many tasks it gave back at start (posted by an earlier process). */
  state?: { path: string; restoredTasks: number };
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/;
/** How often callbacks of done tasks are looked for, in real milliseconds. */
const CALLBACK_POLL_MS = 25;

/**
 * Starts the built-in emulator of the service on loopback, so pipelines and tests run
 * against spec-true responses without an account or spending.
 *
 * @example
 * const sb = await startSandbox({ now: () => clock });
 * await fetch(`${sb.url}/v3/serp/engA/organic/task_post`, {
 *   method: 'POST',
 *   headers: { Authorization: `Bearer ${DEFAULT_SANDBOX_KEY}` },
 *   body: JSON.stringify([{ keyword: 'coffee', location_code: 2840 }]),
 * });
 * await sb.close();
 */
export async function startSandbox(opts: SandboxOptions = {}): Promise<SandboxHandle> {
  const settings = checkedSettings(opts);
  const { host, seed, now } = settings;
  const opened = opts.stateDir ? SandboxJournal.open(opts.stateDir, seed, now().getTime()) : undefined;
  const world = buildWorld(opts, settings, opened);
  // Every call first takes in what another process wrote, completes the tasks done by now (their refunds land), then starts due callbacks.
  const tick = () => {
    const news = world.journal?.news();
    if (news) restore(world, news);
    completeDueTasks(world.seed, world.store, world.account, world.now().getTime(), world.readings);
    world.callbacks.tick();
  };
  const server = createSandboxServer(world, tick);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const poll = setInterval(() => {
    tick();
    persistStep(world); // completions and callbacks between calls
  }, CALLBACK_POLL_MS);
  poll.unref();
  return sandboxHandle(world, server, poll, host, opened);
}

/** The options checked and filled in: where it listens, its clock, seed, faults and readings. */
function checkedSettings(opts: SandboxOptions) {
  const host = opts.host ?? '127.0.0.1';
  if (!LOOPBACK.test(host)) throw new Error(`sandbox host "${host}" is not loopback; it binds only to 127.0.0.1, ::1 or localhost`);
  const readyAfterMs = opts.readyAfterMs ?? 300;
  if (!Number.isFinite(readyAfterMs) || readyAfterMs < 0) throw new Error(`readyAfterMs ${readyAfterMs} must be a non-negative number`);
  const timeScale = opts.timeScale ?? 1;
  if (!Number.isFinite(timeScale) || timeScale <= 0)
    throw new Error(`timeScale ${timeScale} must be a positive number (60 makes a minute last a second)`);
  const seed = opts.seed ?? 1;
  if (opts.callbackConcurrency !== undefined && !(Number.isInteger(opts.callbackConcurrency) && opts.callbackConcurrency > 0))
    throw new Error(`callbackConcurrency ${opts.callbackConcurrency} must be a positive integer`);
  const profile = typeof opts.faults === 'string' ? parseFaultProfile(opts.faults) : resolveFaultProfile(opts.faults);
  const drift = opts.drift ?? 0;
  const readings = parseReadings(opts.readings);
  if (!Number.isFinite(drift) || drift < 0 || drift > 1) throw new Error(`drift ${drift} must be a share from 0 to 1`);
  const given = opts.now ?? (() => new Date());
  // readings.ts `clockSkew`: the server's clock runs off the one it was given (a client's).
  const skewMs = readings.clockSkew * 1000;
  const now = skewMs === 0 ? given : () => new Date(given().getTime() + skewMs);
  return { host, readyAfterMs, timeScale, seed, profile, drift, readings, now };
}

type Opened = ReturnType<typeof SandboxJournal.open>;

/** The emulator's state: account, tasks, faults, limits and logs, with what the journal gave back taken in. */
function buildWorld(opts: SandboxOptions, settings: ReturnType<typeof checkedSettings>, opened: Opened | undefined): SandboxWorld {
  const { seed, drift, now, timeScale, readyAfterMs, profile, readings } = settings;
  const restored = opened?.state && Number.isFinite(opened.state.balanceUnits) ? opened.state : undefined;
  const rankProfiles = resolveRankProfiles(opts.rankProfiles);
  const world = {
    seed,
    drift,
    ...(rankProfiles ? { rankProfiles } : {}),
    now,
    timeScale,
    readyAfterMs: readyAfterMs / timeScale,
    keys: opts.keys,
    account: restored
      ? new SandboxAccount(restored.balanceUnits, restored.totalUnits)
      : new SandboxAccount(parseCny(opts.balanceCny ?? '1000.0000')),
    store: new TaskStore({ tracked: opened !== undefined, ...(opts.resultsKept === undefined ? {} : { resultsKept: opts.resultsKept }) }),
    log: [],
    faults: new FaultInjector(profile, seed, opts.faultPaths),
    stats: new AdminStats(),
    errors: new ErrorLog(),
    usage: new UsageLedger(),
    limiter: limiterFor(opts.rateLimits, timeScale),
    admin: opts.admin ?? false,
    maxTasksPerPost: opts.maxTasksPerPost,
    readings,
    allowRemoteCallbacks: opts.allowRemoteCallbacks ?? false,
    dispatcher: opts.callbackDispatcher,
    callbackConcurrency: opts.callbackConcurrency,
    prebuildPostbacks: opts.prebuildPostbacks ?? false,
    ...(opened ? { journal: opened.journal } : {}),
  } as Omit<SandboxWorld, 'callbacks'> as SandboxWorld;
  world.callbacks = new CallbackDispatcher(world);
  if (opened) {
    if (opened.state) restore(world, opened.state);
    // Lines another process appended (a second run on the same warehouse) are taken in, not written back.
    opened.journal.onNews = (news) => restore(world, news);
  }
  return world;
}

/** What the caller holds of a running emulator: its URL, log, balance, callbacks, top-up and close. */
function sandboxHandle(
  world: SandboxWorld,
  server: Server,
  poll: ReturnType<typeof setInterval>,
  host: string,
  opened: Opened | undefined,
): SandboxHandle {
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    log: world.log,
    balanceCny: () => {
      completeDueTasks(world.seed, world.store, world.account, world.now().getTime(), world.readings);
      persistStep(world);
      return formatCny(world.account.balanceUnits);
    },
    flushCallbacks: async () => {
      await world.callbacks.flush();
      persistStep(world);
    },
    topUp: (cny: string) => {
      world.account.topUp(parseCny(cny));
      persistStep(world);
    },
    ...(opened ? { state: { path: opened.journal.path, restoredTasks: opened.state?.tasks.length ?? 0 } } : {}),
    close: () =>
      new Promise<void>((resolve, reject) => {
        clearInterval(poll);
        server.close((err) => {
          if (world.journal) {
            persistStep(world);
            world.journal.close();
          }
          if (err) reject(err);
          else resolve();
        });
        server.closeAllConnections();
      }),
  };
}

function limiterFor(setting: SandboxOptions['rateLimits'], timeScale: number): SlidingWindowLimiter | undefined {
  if (!setting) return undefined;
  const limits = { ...specFamilyLimits(), ...(setting === true ? {} : setting) };
  return new SlidingWindowLimiter(limits, 60_000 / timeScale);
}

/**
 * Takes state read from the journal into the world: tasks (a task already known is updated in
 * place), the balance and the usage of the calls. A callback caught mid-send is sent again.
 * Nothing taken in is written back.
 */
function restore(world: SandboxWorld, state: JournalState): void {
  const ours = world.store.takeChanged(); // this process's changes not written yet stay to be written
  for (const loaded of state.tasks) {
    const key = world.journal ? world.journal.keyOf(loaded.key) : loaded.key;
    const task = { ...loaded, key, ...(loaded.callbackState === 'sending' ? { callbackState: 'pending' as const } : {}) };
    const known = world.store.get(task.id, task.key);
    if (known) Object.assign(known, task);
    else world.store.add(task, mayBeRefunded(endpointById(task.endpointId), task.params, task.chargedUnits));
  }
  if (Number.isFinite(state.balanceUnits)) world.account.restore(state.balanceUnits, state.totalUnits);
  for (const c of state.calls) world.usage.record(new Date(c.at), c.api, c.fn, c.units);
  world.store.takeChanged();
  for (const t of ours) world.store.touch(t);
}
