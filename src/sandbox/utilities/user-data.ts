import { ENDPOINTS, FAMILY_PER_MINUTE, familyOfPath, type Endpoint } from '../spec/index.js';
import { callName } from '../call-name.js';
import { functionBase } from '../function-base.js';
import type { HandlerReply, RouteContext } from '../handlers/context.js';
import { CNY_UNIT, cnyUnitsToUsdMicros, formatCny } from '../money.js';
import { taskPriceUnits } from '../pricing.js';
import { dayOf, minuteOf, type PeriodUsage } from '../usage.js';
import { utilityReply } from './utility-reply.js';

type Tree = Record<string, unknown>;
const SUBSCRIPTION_DAYS = 30;

/** `yyyy-MM-dd HH:mm:ss +00:00` (UTC), the format of the expiry dates. */
function expiry(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} +00:00`;
}

function apiOf(e: Endpoint): string {
  return e.path.split('/')[2] ?? 'unknown';
}

/** `<func_type>` of a rate: the function's path between the api and the mode (`engA/organic`, `engA_ads/search_volume`), else `default`. */
function funcTypeOf(e: Endpoint): string {
  return functionBase(e.path).split('/').slice(3).join('/') || 'default';
}

function usd(units: number): number {
  return cnyUnitsToUsdMicros(units) / 1_000_000;
}

/** `rates`: api > function > func_type > priorities, in raw USD, from the emulator's price list. */
function rates(): Tree {
  const out: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const e of ENDPOINTS) {
    if (!e.charged || (e.mode !== 'task_post' && e.mode !== 'live')) continue;
    const mode = e.mode === 'live' ? 'live' : 'standard';
    const normal = usd(taskPriceUnits(e, {}, mode));
    const high = usd(taskPriceUnits(e, { priority: 2 }, mode));
    const api = (out[apiOf(e)] ??= {});
    const fn = (api[e.mode] ??= {}) as Record<string, unknown>;
    fn[funcTypeOf(e)] = {
      priority_low: normal,
      priority_normal: normal,
      priority_high: mode === 'live' ? normal : high,
      cost_type: 'per_request',
      cost: normal,
    };
  }
  return out;
}

/** `limits`: day / minute > api > function, plus `total_<api>` (the api's general family), from the rate-limit families. */
function limits(): Tree {
  const minute: Tree = {};
  const day: Tree = {};
  for (const e of ENDPOINTS) {
    const api = apiOf(e);
    const [, fn] = callName(e.path, e);
    const perMinute = FAMILY_PER_MINUTE[e.family];
    ((minute[api] ??= {}) as Tree)[fn] = perMinute;
    ((day[api] ??= {}) as Tree)[fn] = perMinute * 1440;
    const total = FAMILY_PER_MINUTE[familyOfPath(`/v3/${api}/any`)];
    minute[`total_${api}`] = total;
    day[`total_${api}`] = total * 1440;
  }
  return { day, minute };
}

/** One period of statistics: `value` plus api > function counts and `total_<api>`. */
function period(value: string, byApi: Map<string, Map<string, number>>, map: (n: number) => number): Tree {
  const out: Tree = { value };
  for (const [api, fns] of byApi) {
    if (api === 'v1') continue;
    let total = 0;
    const inner: Tree = {};
    for (const [fn, n] of fns) {
      inner[fn] = map(n);
      total += n;
    }
    out[api] = inner;
    out[`total_${api}`] = map(total);
  }
  return out;
}

/**
 * `GET /v3/appendix/user_data`: the account as the spec nests it — `rates`, `limits`,
 * `statistics` (calls really made this day and minute), `money` (total, balance, and the
 * spending of this day and minute per function) and the subscription expiry dates.
 * Free.
 */
export function handleUserData(ctx: RouteContext): HandlerReply {
  const now = ctx.now;
  const usage = (name: string): PeriodUsage => ctx.world.usage.period(name);
  const day = usage(dayOf(now));
  const minute = usage(minuteOf(now));
  const cny = (units: number) => Number(formatCny(units));
  const account = ctx.world.account;
  const result = {
    login: ctx.caller.live ? 'sandbox-live' : 'sandbox',
    timezone: 'UTC',
    rates: rates(),
    limits: limits(),
    statistics: {
      day: period(dayOf(now), day.calls, (n) => n),
      minute: period(minuteOf(now), minute.calls, (n) => n),
    },
    money: {
      total: account.totalUnits / CNY_UNIT,
      balance: account.balanceUnits / CNY_UNIT,
      limits: { day: {}, minute: {} },
      statistics: {
        day: period(dayOf(now), day.spentUnits, cny),
        minute: period(minuteOf(now), minute.spentUnits, cny),
      },
    },
    backlinks_subscription_expiry_date: expiry(new Date(now.getTime() + SUBSCRIPTION_DAYS * 24 * 3600 * 1000)),
    llm_mentions_subscription_expiry_date: null,
  };
  return utilityReply(ctx, 'user_data', [result]);
}
