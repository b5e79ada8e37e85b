import type { Dispatcher } from 'undici';
import type { SandboxAccount } from './account.js';
import type { AdminStats } from './admin-stats.js';
import type { CallbackDispatcher } from './callbacks.js';
import type { ErrorLog } from './error-log.js';
import type { ServedReadings } from './readings.js';
import type { FaultInjector } from './faults/fault-injector.js';
import type { RankProfiles } from './rank-walk.js';
import type { SlidingWindowLimiter } from './rate-limit.js';
import type { SandboxJournal } from './state-journal.js';
import type { TaskStore } from './task-store.js';
import type { UsageLedger } from './usage.js';

/** One response the emulator sent, for tests that reconcile a ledger against it. */
export interface SandboxLogEntry {
  method: string;
  path: string;
  /** HTTP status; 0 when the fault profile dropped the connection after processing. */
  status: number;
  requestId: string;
  chargeCny: string;
}

/**
 * Everything the emulator's handlers share, resolved once by `startSandbox`: the clock,
 * the seed, the account and the stores. Passed in rather than imported, so each
 * emulator instance is its own world and tests can run several side by side.
 */
export interface SandboxWorld {
  seed: number;
  /** Share of SERPs (0..1) served with forms real bodies have and the emulator usually does not (serp-drift.ts). */
  drift: number;
  /** Domains placed in SERPs by a rank distribution (rank-walk.ts); undefined: none. */
  rankProfiles?: RankProfiles;
  now: () => Date;
  /** Emulator time speed-up: 60 makes a minute of rate limit (and every delay) last a second. */
  timeScale: number;
  /** Delay from posting to done, on the emulator clock, already divided by `timeScale`. */
  readyAfterMs: number;
  keys: readonly string[] | undefined;
  account: SandboxAccount;
  store: TaskStore;
  log: SandboxLogEntry[];
  faults: FaultInjector;
  stats: AdminStats;
  errors: ErrorLog;
  usage: UsageLedger;
  /** Undefined when rate limits are off. */
  limiter: SlidingWindowLimiter | undefined;
  admin: boolean;
  /** A lower limit of tasks per `task_post` POST than the endpoint table's (40006 past it); undefined: the table's. */
  maxTasksPerPost: number | undefined;
  /** Deliver callbacks to non-loopback hosts too (off: tests never reach the outside network). */
  allowRemoteCallbacks: boolean;
  /** The reading served at each switchable silent point of the spec (readings.ts). */
  readings: ServedReadings;
  /** Sends pingbacks and postbacks (and resends them). */
  callbacks: CallbackDispatcher;
  /** HTTP dispatcher for callbacks; undici's global one by default. */
  dispatcher: Dispatcher | undefined;
  /** Most callbacks under way at once (more wait their turn); undefined: no bound. */
  callbackConcurrency: number | undefined;
  /** Build each postback task's body in idle turns after its POST rather than at its send (postback-body.ts). */
  prebuildPostbacks: boolean;
  /** Set when the emulator keeps its state on disk (`stateDir`): every change is written there before it is answered. */
  journal?: SandboxJournal;
}
