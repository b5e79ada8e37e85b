import type { AddressInfo } from 'node:net';
import { SandboxAccount } from './account.js';
import { formatCny, parseCny } from './money.js';
import { createSandboxServer, type SandboxLogEntry } from './server.js';
import { TaskStore } from './task-store.js';

export { SAMPLE_TASK_ID } from './handlers/task-get.js';
export { serpTaskPriceUnits } from './pricing.js';
export type { SandboxLogEntry } from './server.js';

/** A key the emulator accepts out of the box; sandbox keys are never charged. */
export const DEFAULT_SANDBOX_KEY = 'svc_sandbox_local';

/** How to run the emulator. Every source of variation (clock, seed) is passed in. */
export interface SandboxOptions {
  /** 0 or undefined picks a free port. */
  port?: number;
  /** Loopback only; default `127.0.0.1`. */
  host?: string;
  /** Default 1; all data are deterministic for (seed, task params, UTC date). */
  seed?: number;
  /** The clock; default `() => new Date()`. Tests advance it instead of sleeping. */
  now?: () => Date;
  /** Starting simulated balance in CNY, default `'1000.0000'`. */
  balanceCny?: string;
  /** A posted task becomes ready this long after posting, by `now`; default 300. */
  readyAfterMs?: number;
  /** Accepted keys; default any key matching `/^svc_(live|sandbox)_[A-Za-z0-9]{4,}$/`. */
  keys?: string[];
}

/** A running emulator. */
export interface SandboxHandle {
  /** e.g. `http://127.0.0.1:41234`, no trailing slash. */
  url: string;
  port: number;
  close(): Promise<void>;
  /** every response sent: method, path, http status, request id, charge CNY as string — lets tests compare the ledger with what was sent */
  readonly log: ReadonlyArray<{ method: string; path: string; status: number; requestId: string; chargeCny: string }>;
  /** The simulated balance now, CNY with 4 decimals. */
  balanceCny(): string;
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/;

/**
 * Starts the built-in emulator of the service's SERP organic slice on loopback, so
 * pipelines and tests run against spec-true responses without an account or spending.
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
  const host = opts.host ?? '127.0.0.1';
  if (!LOOPBACK.test(host)) throw new Error(`sandbox host "${host}" is not loopback; it binds only to 127.0.0.1, ::1 or localhost`);
  const readyAfterMs = opts.readyAfterMs ?? 300;
  if (!Number.isFinite(readyAfterMs) || readyAfterMs < 0) throw new Error(`readyAfterMs ${readyAfterMs} must be a non-negative number`);
  const account = new SandboxAccount(parseCny(opts.balanceCny ?? '1000.0000'));
  const log: SandboxLogEntry[] = [];
  const server = createSandboxServer({
    seed: opts.seed ?? 1,
    now: opts.now ?? (() => new Date()),
    readyAfterMs,
    keys: opts.keys,
    account,
    store: new TaskStore(),
    log,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    log,
    balanceCny: () => formatCny(account.balanceUnits),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
