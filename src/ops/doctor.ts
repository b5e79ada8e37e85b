import { randomUUID } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { access, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { request, type Dispatcher } from 'undici';
import { endpoint } from '../catalog/index.js';
import { ServiceClient } from '../client/index.js';
import type { EtlError } from '../errors.js';
import { withWarehouse } from '../warehouse/index.js';

export type CheckLevel = 'ok' | 'warn' | 'fail';

/** One line of `pipeline doctor`: what was checked, what was found, what to do if it failed. */
export interface Check {
  name: string;
  level: CheckLevel;
  detail: string;
  fix?: string;
}

export interface DoctorOptions {
  baseUrl: string;
  apiKey: string;
  warehouseDir: string;
  /** A callback URL the pipelines use, if any: it must answer from outside within 10 s. */
  callbackUrl?: string;
  dispatcher?: Dispatcher;
  now?: () => Date;
  /** Clock skew beyond which the check fails (the service stamps times in UTC). */
  maxSkewMs?: number;
  /** The lake (s3://bucket/prefix) runs publish to, if any: checked with a probe object. */
  lakeUrl?: string;
  /** Environment with the AWS variables for the lake; default `process.env`. */
  env?: Record<string, string | undefined>;
}

type UserData = {
  login?: string;
  money?: { balance?: number; total?: number };
  limits?: { minute?: Record<string, unknown>; day?: Record<string, unknown> };
  backlinks_subscription_expiry_date?: string | null;
};

/**
 * Checks what a nightly run depends on, each as one line: the key (valid, live or
 * sandbox), the balance and limits from `user_data`, outages from `appendix/status`, the
 * warehouse folder is writable, the callback URL answers, the clock agrees with the
 * service's, and the lake (when one is configured) lets us list, put and delete. Only
 * free endpoints are called; their bodies are not landed (no run owns them).
 */
export async function runDoctor(o: DoctorOptions): Promise<Check[]> {
  const now = o.now ?? (() => new Date());
  const client = new ServiceClient({
    baseUrl: o.baseUrl,
    apiKey: o.apiKey,
    land: async () => {},
    dispatcher: o.dispatcher,
    maxAttempts: 2,
    timeoutMs: 20_000,
  });
  const checks: Check[] = [];
  const kind = o.apiKey.startsWith('svc_live_') ? 'live' : 'sandbox';

  let user: UserData | undefined;
  try {
    const call = await client.call(endpoint('appendix.user_data'));
    user = (call.envelope.tasks?.[0]?.result?.[0] ?? {}) as UserData;
    checks.push({ name: 'key', level: 'ok', detail: `${kind} key accepted by ${o.baseUrl}${user.login ? ` (login ${user.login})` : ''}` });
  } catch (err) {
    const e = err as EtlError;
    checks.push({
      name: 'key',
      level: 'fail',
      detail: e.code === 'ETL_AUTH' ? `the service refused the ${kind} key (HTTP 401)` : `user_data failed: ${e.message}`,
      fix:
        e.code === 'ETL_AUTH'
          ? 'set SVC_API_KEY to a valid key for this address (svc_sandbox_ keys go with the sandbox address)'
          : 'check SVC_BASE_URL and the network',
    });
  }
  if (user) {
    const balance = user.money?.balance;
    checks.push(
      typeof balance !== 'number'
        ? { name: 'balance', level: 'warn', detail: 'user_data has no money.balance' }
        : balance <= 0 && kind === 'live'
          ? { name: 'balance', level: 'fail', detail: `balance ${balance} CNY`, fix: 'top up the account; runs stop at the first 402' }
          : {
              name: 'balance',
              level: 'ok',
              detail: `balance ${balance} CNY${kind === 'sandbox' ? ' (sandbox keys are never charged)' : ''}`,
            },
    );
    const perMinute = user.limits?.minute ?? {};
    const totals = Object.entries(perMinute).filter(([k, v]) => k.startsWith('total_') && typeof v === 'number');
    checks.push({
      name: 'limits',
      level: totals.length ? 'ok' : 'warn',
      detail: totals.length
        ? `per minute: ${totals.map(([k, v]) => `${k.slice(6)} ${v}`).join(', ')}`
        : 'user_data lists no per-minute limits',
    });
  }
  checks.push(await statusCheck(client));
  checks.push(await warehouseCheck(o.warehouseDir));
  if (o.callbackUrl) checks.push(await callbackCheck(o.callbackUrl, o.dispatcher));
  checks.push(await clockCheck(o.baseUrl, now, o.maxSkewMs ?? 60_000, o.dispatcher));
  if (o.lakeUrl) checks.push(await lakeCheck(o.lakeUrl, o.env ?? process.env));
  return checks;
}

const LAKE_FIX: Record<string, string> = {
  ETL_LAKE_CONFIG: 'fix the s3://bucket/prefix address (PIPELINE_LAKE, --lake or lake:), create the bucket, or set the AWS credentials',
  ETL_LAKE_REFUSED: 'check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and that they may list, put and delete under the prefix',
  ETL_LAKE_UNREACHABLE: 'check AWS_ENDPOINT_URL (for a store other than AWS S3) and the network',
};

async function lakeCheck(url: string, env: Record<string, string | undefined>): Promise<Check> {
  try {
    // Loaded only here: the AWS SDK takes over a second to import.
    const { checkLake } = await import('../lake/index.js');
    const c = await checkLake(url, env);
    return { name: 'lake', level: 'ok', detail: `${c.url} at ${c.endpoint ?? 'AWS S3'}: list, put and delete work (${c.ms} ms)` };
  } catch (err) {
    const e = err as EtlError;
    return { name: 'lake', level: 'fail', detail: e.message, fix: LAKE_FIX[e.code] ?? 'see docs/lake.md' };
  }
}

async function statusCheck(client: ServiceClient): Promise<Check> {
  try {
    const call = await client.call(endpoint('appendix.status'));
    const apis = (call.envelope.tasks?.[0]?.result ?? []) as {
      api?: string;
      status?: string;
      endpoints?: { endpoint?: string; status?: string }[];
    }[];
    const bad: string[] = [];
    for (const a of apis) {
      if (a.status && a.status !== 'ok') bad.push(`${a.api}: ${a.status}`);
      for (const e of a.endpoints ?? []) if (e.status && e.status !== 'ok') bad.push(`${e.endpoint}: ${e.status}`);
    }
    if (bad.length === 0) return { name: 'status', level: 'ok', detail: `${apis.length} APIs report ok` };
    const outage = bad.some((b) => /outage/.test(b));
    return {
      name: 'status',
      level: outage ? 'fail' : 'warn',
      detail: bad.slice(0, 6).join('; ') + (bad.length > 6 ? ` (+${bad.length - 6} more)` : ''),
      fix: 'runs may fail or be slow; postpone, or expect results late (the run can be resumed)',
    };
  } catch (err) {
    return { name: 'status', level: 'warn', detail: `appendix/status failed: ${(err as Error).message}` };
  }
}

/**
 * The warehouse folder is writable and its DuckDB file opens. A check creates nothing: a folder
 * that does not exist yet (a mistyped --warehouse, or before the first run) is reported with the
 * nearest folder above it that does, which must be writable for the first run to create it.
 */
async function warehouseCheck(dir: string): Promise<Check> {
  if (!existsSync(dir)) {
    let parent = resolve(dir);
    while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
    try {
      await access(parent, constants.W_OK);
    } catch {
      return {
        name: 'warehouse',
        level: 'fail',
        detail: `${dir} does not exist, and ${parent} is not writable`,
        fix: 'pass --warehouse DIR with a folder this user can write',
      };
    }
    return { name: 'warehouse', level: 'ok', detail: `${dir} does not exist yet: the first run creates it (${parent} is writable)` };
  }
  const probe = join(dir, `.doctor-${randomUUID().slice(0, 8)}`);
  try {
    await writeFile(probe, 'ok');
    await rm(probe);
  } catch (err) {
    return {
      name: 'warehouse',
      level: 'fail',
      detail: `${dir} is not writable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      fix: 'pass --warehouse DIR with a folder this user can write',
    };
  }
  if (!existsSync(join(dir, 'warehouse.duckdb')))
    return { name: 'warehouse', level: 'ok', detail: `${dir} is writable; no warehouse.duckdb yet (the first run creates it)` };
  try {
    await withWarehouse(dir, async () => {});
    return { name: 'warehouse', level: 'ok', detail: `${dir} is writable and its DuckDB file opens` };
  } catch (err) {
    return {
      name: 'warehouse',
      level: 'fail',
      detail: (err as Error).message,
      fix: 'another process (a run, a BI tool) may hold the DuckDB file; wait for it or close it',
    };
  }
}

async function callbackCheck(url: string, dispatcher?: Dispatcher): Promise<Check> {
  const started = Date.now();
  try {
    const res = await request(url, { method: 'GET', dispatcher, headersTimeout: 10_000, bodyTimeout: 10_000 });
    await res.body.dump();
    const ms = Date.now() - started;
    const ok = res.statusCode >= 200 && res.statusCode <= 300;
    return ok
      ? { name: 'callback', level: 'ok', detail: `${url} answered ${res.statusCode} in ${ms} ms` }
      : {
          name: 'callback',
          level: 'fail',
          detail: `${url} answered ${res.statusCode}`,
          fix: 'the service treats a status outside 200-300 as a failed callback; results then wait in the ready list',
        };
  } catch (err) {
    return {
      name: 'callback',
      level: 'fail',
      detail: `${url} did not answer (${(err as Error).message})`,
      fix: 'check the public URL and that the callback server is running; pull collection still works',
    };
  }
}

/**
 * The service's clock minus ours, in ms, from the `Date` header of a GET of the base address
 * (compared with the middle of the round trip; the header has 1 s resolution); null when the
 * service sends no Date header.
 */
export async function serviceSkewMs(baseUrl: string, now: () => Date, dispatcher?: Dispatcher): Promise<number | null> {
  const before = now().getTime();
  const res = await request(baseUrl.replace(/\/+$/, '') + '/', { method: 'GET', dispatcher, headersTimeout: 10_000 });
  await res.body.dump();
  const after = now().getTime();
  const date = res.headers.date;
  const server = Date.parse(Array.isArray(date) ? date[0]! : (date ?? ''));
  return Number.isNaN(server) ? null : server - (before + after) / 2;
}

async function clockCheck(baseUrl: string, now: () => Date, maxSkewMs: number, dispatcher?: Dispatcher): Promise<Check> {
  try {
    const ahead = await serviceSkewMs(baseUrl, now, dispatcher);
    if (ahead === null) return { name: 'clock', level: 'warn', detail: 'the service sent no Date header to compare with' };
    const skew = -ahead;
    const secs = (skew / 1000).toFixed(1);
    return Math.abs(skew) <= maxSkewMs + 1000
      ? { name: 'clock', level: 'ok', detail: `within ${Math.abs(Number(secs))} s of the service` }
      : {
          name: 'clock',
          level: 'fail',
          detail: `${secs} s off the service's clock`,
          fix: 'enable NTP (timedatectl set-ntp true); time windows of errors and id_list depend on it',
        };
  } catch (err) {
    return { name: 'clock', level: 'warn', detail: `could not read the service's clock (${(err as Error).message})` };
  }
}
