import { endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { Warehouse } from '../warehouse/index.js';
import { isTimeZone } from './ledger-report.js';
import { toMicros } from '../post/index.js';

type Tree = Record<string, unknown>;

/** The account's own figures from `user_data`, as reconciliation reads them. */
export interface AccountFigures {
  /** `money.statistics.day`: the account's spending of its current day, per api (`total_<api>`). */
  dayStats: Tree;
  /** The day `dayStats` is of (`value`), in the account's zone. */
  statsDay: string | null;
  /** `statistics.minute.value`: the account's current minute, in its zone. */
  minute: string | null;
  /** The zone the account names (`timezone`), else UTC. */
  givenTz: string;
  /** `givenTz` when ICU knows it, else UTC. */
  accountTz: string;
  /** The balance now, micro-CNY. */
  balanceNow: bigint | null;
}

/** Reads the account's figures with one free `user_data` call. */
export async function readAccount(client: ServiceClient): Promise<AccountFigures> {
  const call = await client.call(endpoint('appendix.user_data'));
  const user = (call.envelope.tasks?.[0]?.result?.[0] ?? {}) as Tree;
  const money = (user.money ?? {}) as Tree;
  const moneyStats = (money.statistics ?? {}) as Tree;
  const dayStats = (moneyStats.day ?? {}) as Tree;
  const minute = ((user.statistics ?? {}) as Tree).minute as Tree | undefined;
  const givenTz = typeof user.timezone === 'string' && user.timezone ? user.timezone : 'UTC';
  return {
    dayStats,
    statsDay: typeof dayStats.value === 'string' ? dayStats.value : null,
    minute: typeof minute?.value === 'string' ? minute.value : null,
    givenTz,
    // A zone the account names that ICU does not know: days in UTC, its statistics not compared.
    accountTz: isTimeZone(givenTz) ? givenTz : 'UTC',
    balanceNow: typeof money.balance === 'number' ? toMicros(money.balance) : null,
  };
}

/**
 * The account's today in `tz`: the day of its statistics when `tz` is its own zone, else its
 * statistics' minute (in its zone) seen from `tz` (DuckDB's ICU, built in), else the clock here.
 */
export async function accountToday(wh: Warehouse, tz: string, a: AccountFigures): Promise<string> {
  if (tz === a.accountTz && a.statsDay) return a.statsDay;
  if (a.minute && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/.test(a.minute)) {
    const [r] = await wh.all<{ d: string }>(`SELECT strftime(($1::TIMESTAMP AT TIME ZONE $2) AT TIME ZONE $3, '%Y-%m-%d') AS d`, [
      a.minute,
      a.accountTz,
      tz,
    ]);
    if (r) return r.d;
  }
  return new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}

/** Why the account's statistics cannot be compared for `day` in `tz`, or undefined when they can. */
export function statisticsNote(a: AccountFigures, tz: string, day: string): string | undefined {
  return a.givenTz !== a.accountTz
    ? `the account's time zone '${a.givenTz}' is not an IANA zone known here, so its days cannot be matched: ${day} is checked by the balance chain alone`
    : tz !== a.accountTz
      ? `the account's statistics count days in its own time zone (${a.accountTz}), not ${tz}: ${day} is checked by the balance chain alone`
      : day !== a.statsDay
        ? `user_data gives the account's spending of its current day only (${a.statsDay ?? 'none'}): ${day} is checked by the balance chain alone`
        : undefined;
}
