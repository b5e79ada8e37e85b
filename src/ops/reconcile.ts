import { endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import { RUN_KEY_KINDS_SQL, type Warehouse } from '../warehouse/index.js';
import { EtlError } from '../errors.js';
import { isTimeZone } from './ledger-report.js';
import { fromMicros, toMicros } from '../post/index.js';

/** What kind of difference finance is looking at. */
export type DiscrepancyKind =
  /** A ledger call whose response carried no `X-Svc-Charge-CNY`, or whose answer never arrived: its cost is unknown. */
  | 'missing_charge_header'
  /** The account spent more than the ledger knows (another client, or a lost row). */
  | 'charge_not_in_ledger'
  /** The ledger holds charges the account's statistics do not show. */
  | 'ledger_charge_not_in_account'
  /** The balance rose by more than the ledger's refund rows explain: a top-up, or a refund not (yet) recorded. */
  | 'unmatched_refund'
  /** The balance fell by more than the ledger's charges between two calls. */
  | 'unexplained_debit';

export interface Discrepancy {
  kind: DiscrepancyKind;
  /** Exact decimal string, CNY (positive: the account side is higher). */
  amountCny: string;
  detail: string;
  callId?: string;
  requestId?: string;
  api?: string;
}

export interface Reconciliation {
  /** The day reconciled (`yyyy-MM-dd` in `timezone`). */
  day: string;
  timezone: string;
  /** What the ledgers' calls of the day were charged (gross, as the account's statistics count). */
  ledgerCny: string;
  /** Refund rows of the day and after, matched against rises of the balance. */
  refundedCny: string;
  /**
   * The account's own spending of the day (`money.statistics.day`), or null when `user_data` has
   * none for it: it gives its current day only, in its own time zone, so a past day, or a day in
   * another zone, is checked by the balance chain alone (`statisticsNote` says so).
   */
  accountCny: string | null;
  /** Why the account's statistics were not compared, when they were not. */
  statisticsNote?: string;
  /**
   * The day's `/v1` charges (chat, embeddings), in `ledgerCny` but not compared with the
   * account's statistics: the interface describes those by `/v3` api and says nothing of `/v1`
   * (the emulator leaves it out), so a `/v1` charge is checked by the balance chain alone
   * (unless the account shows `total_v1`).
   */
  unitemizedCny: string;
  balanceCny: string | null;
  calls: number;
  uncharged: number;
  discrepancies: Discrepancy[];
  /**
   * Charges the account has that none of the given ledgers knows (`charge_not_in_ledger`,
   * `unexplained_debit`), when the ledgers are not said to be all of the account's clients (one
   * warehouse, without `complete`): they may be another warehouse's (or another tool's). Not
   * discrepancies; with `complete` they are listed in `discrepancies` instead.
   */
  unaccounted: Discrepancy[];
  /**
   * The day's calls whose charge is an estimate (`ledger.charge_estimated`: a POST whose answer
   * never arrived, priced once `id_list` listed the tasks it created). Counted in `ledgerCny`, so
   * compared with the account like any charge; listed to be confirmed, not a discrepancy.
   */
  estimates: EstimatedCharge[];
}

export interface EstimatedCharge {
  callId: string;
  path: string;
  amountCny: string;
  detail: string;
}

/** Which days, in which zone, against which ledgers. */
export interface ReconcileOptions {
  /** First day: `yyyy-mm-dd`, `today` or `yesterday` (the account's today, in `tz`). Default today. */
  from?: string;
  /** Last day, inclusive; default `from`. */
  to?: string;
  /** IANA time zone of the days; default the account's (`user_data.timezone`), else UTC. */
  tz?: string;
  /**
   * The ledgers given are all the account's clients: a charge none of them knows is a
   * discrepancy. Otherwise it is listed in `unaccounted`, as possibly another warehouse's.
   */
  complete?: boolean;
}

/** Differences below 0.0001 CNY (100 micro-CNY) are rounding, not discrepancies. */
const TOLERANCE = 100n;
/** The longest range reconciled at once. */
export const MAX_DAYS = 366;

type Tree = Record<string, unknown>;

interface CallRow {
  call_id: string;
  request_id: string | null;
  path: string;
  charge: string | null;
  balance: string | null;
  lost: boolean;
  estimated: boolean;
  sandbox: boolean;
  tasks: number;
  day: string;
  at: string;
}

/** The account's today's reconciliation (in its own time zone), every ledger charge checked: as `reconcileDays` with one warehouse, `complete`. */
export async function reconcile(wh: Warehouse, client: ServiceClient): Promise<Reconciliation> {
  const [r] = await reconcileDays([wh], client, { complete: true });
  return r!;
}

/** Whether `s` is a calendar day written yyyy-mm-dd. */
function isCalendarDay(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) && new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s;
}

/** `yyyy-mm-dd` plus `n` days. */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Compares the ledgers with the account's own figures from `user_data`, day by day (calendar
 * days in `tz`): the day's spending per api (`money.statistics.day.total_<api>`, for the
 * account's current day in its own time zone, the only day `user_data` gives) against the
 * ledgers' charges of that day, the chain of `X-Svc-Balance-CNY` values against the charges
 * between them (every day: the balances are the account's own record, call by call), from the
 * day's last balance to the next one seen (a later day's, or the balance now), and every call
 * that came back without a charge header. Differences of 0.0001 CNY or more are listed.
 *
 * Several warehouses on one account: their ledgers are merged by call time into one chain and
 * their charges summed, so each one's calls explain the others' balance steps.
 *
 * Refunds (unused depth) come back to the balance when a task is done, between two calls,
 * and the ledger records each one as its own row when the task's result is collected
 * (ledger.ts), so possibly later and never on the exact call where the balance rose. The
 * balance chain is therefore checked against the charges of the calls, and every rise it
 * shows is matched against the day's refund rows (and later ones: a task done today may be
 * collected tomorrow), as one pool; only a rise the pool cannot cover is reported as
 * `unmatched_refund`. The account's day statistics count charges, so they are compared with
 * the calls' charges, without the refunds.
 */
export async function reconcileDays(whs: readonly Warehouse[], client: ServiceClient, o: ReconcileOptions = {}): Promise<Reconciliation[]> {
  const call = await client.call(endpoint('appendix.user_data'));
  const user = (call.envelope.tasks?.[0]?.result?.[0] ?? {}) as Tree;
  const money = (user.money ?? {}) as Tree;
  const moneyStats = (money.statistics ?? {}) as Tree;
  const dayStats = (moneyStats.day ?? {}) as Tree;
  const minute = ((user.statistics ?? {}) as Tree).minute as Tree | undefined;
  const givenTz = typeof user.timezone === 'string' && user.timezone ? user.timezone : 'UTC';
  // A zone the account names that ICU does not know: days in UTC, its statistics not compared.
  const accountTz = isTimeZone(givenTz) ? givenTz : 'UTC';
  const tz = o.tz ?? accountTz;
  const statsDay = typeof dayStats.value === 'string' ? dayStats.value : null;
  const today = await todayIn(whs[0]!, tz, accountTz, statsDay, typeof minute?.value === 'string' ? minute.value : null);
  const named = (d: string) => (d === 'today' ? today : d === 'yesterday' ? addDays(today, -1) : d);
  const from = named(o.from ?? 'today');
  const to = named(o.to ?? o.from ?? 'today');
  const complete = o.complete ?? false;
  for (const [name, d] of [
    ['from', from],
    ['to', to],
  ] as const)
    if (!isCalendarDay(d))
      throw new EtlError(
        'ETL_CONFIG_INVALID',
        `--${name === 'from' && o.to === undefined ? 'day' : name} takes yyyy-mm-dd, today or yesterday; got '${d}'`,
      );
  if (from > to) throw new EtlError('ETL_CONFIG_INVALID', `--from ${from} is after --to ${to}: no day is in that range; swap them`);
  if (Date.parse(to) - Date.parse(from) >= MAX_DAYS * 86_400_000)
    throw new EtlError('ETL_CONFIG_INVALID', `--from ${from} --to ${to} is more than ${MAX_DAYS} days: reconcile a shorter range`);

  const rows: CallRow[] = [];
  const refundsByDay = new Map<string, bigint>();
  for (const wh of whs) {
    rows.push(
      ...(await wh.all<CallRow>(
        `SELECT l.call_id, l.request_id, l.path, l.charge_cny::VARCHAR AS charge, l.balance_cny::VARCHAR AS balance, l.tasks,
                l.http_status IS NULL AS lost, coalesce(l.charge_estimated, false) AS estimated,
                coalesce(r.key_kind = 'sandbox', false) AS sandbox,
                strftime(l.called_at AT TIME ZONE $1, '%Y-%m-%d') AS day, epoch_us(l.called_at)::VARCHAR AS at
         FROM ledger l LEFT JOIN ${RUN_KEY_KINDS_SQL} r USING (run_id)
         WHERE (l.called_at AT TIME ZONE $1)::DATE >= $2::DATE AND l.task_id IS NULL`,
        [tz, from],
      )),
    );
    for (const r of await wh.all<{ day: string; refunded: string }>(
      `SELECT strftime(l.called_at AT TIME ZONE $1, '%Y-%m-%d') AS day, coalesce(sum(l.refund_cny), 0)::VARCHAR AS refunded
       FROM ledger l LEFT JOIN ${RUN_KEY_KINDS_SQL} r USING (run_id)
       WHERE (l.called_at AT TIME ZONE $1)::DATE >= $2::DATE AND l.task_id IS NOT NULL AND NOT coalesce(r.key_kind = 'sandbox', false)
       GROUP BY 1`,
      [tz, from],
    ))
      refundsByDay.set(r.day, (refundsByDay.get(r.day) ?? 0n) + toMicros(r.refunded));
  }
  rows.sort((a, b) => {
    const d = BigInt(a.at) - BigInt(b.at);
    return d < 0n ? -1 : d > 0n ? 1 : a.call_id < b.call_id ? -1 : a.call_id > b.call_id ? 1 : 0;
  });
  const balanceNow = typeof money.balance === 'number' ? toMicros(money.balance) : null;

  const out: Reconciliation[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) {
    let refunded = 0n;
    for (const [d, m] of refundsByDay) if (d >= day) refunded += m;
    const statistics =
      givenTz !== accountTz
        ? `the account's time zone '${givenTz}' is not an IANA zone known here, so its days cannot be matched: ${day} is checked by the balance chain alone`
        : tz !== accountTz
          ? `the account's statistics count days in its own time zone (${accountTz}), not ${tz}: ${day} is checked by the balance chain alone`
          : day !== statsDay
            ? `user_data gives the account's spending of its current day only (${statsDay ?? 'none'}): ${day} is checked by the balance chain alone`
            : undefined;
    out.push(reconcileDay(day, tz, rows, refunded, statistics === undefined ? dayStats : null, statistics, balanceNow, complete));
  }
  return out;
}

/**
 * The account's today in `tz`: the day of its statistics when `tz` is its own zone, else its
 * statistics' minute (in its zone) seen from `tz` (DuckDB's ICU, built in), else the clock here.
 */
async function todayIn(wh: Warehouse, tz: string, accountTz: string, statsDay: string | null, minute: string | null): Promise<string> {
  if (tz === accountTz && statsDay) return statsDay;
  if (minute && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/.test(minute)) {
    const [r] = await wh.all<{ d: string }>(`SELECT strftime(($1::TIMESTAMP AT TIME ZONE $2) AT TIME ZONE $3, '%Y-%m-%d') AS d`, [
      minute,
      accountTz,
      tz,
    ]);
    if (r) return r.d;
  }
  return new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}

const FOREIGN =
  " It may be another warehouse's (or another tool's) charge on this account: reconcile with --warehouse for each warehouse on it, or --strict if this one is its only client.";

function reconcileDay(
  day: string,
  timezone: string,
  all: readonly CallRow[],
  refunded: bigint,
  dayStats: Tree | null,
  statisticsNote: string | undefined,
  balanceNow: bigint | null,
  complete: boolean,
): Reconciliation {
  const out: Discrepancy[] = [];
  const unaccounted: Discrepancy[] = [];
  const foreign = (d: Discrepancy) => (complete ? out.push(d) : unaccounted.push({ ...d, detail: d.detail + FOREIGN }));
  const estimates: EstimatedCharge[] = [];
  const rows = all.filter((r) => r.day === day);
  const pool = { micros: refunded };
  const ledgerByApi = new Map<string, bigint>();
  let ledgerTotal = 0n;
  let uncharged = 0;
  for (const r of rows) {
    if (r.sandbox) {
      uncharged++;
      continue;
    }
    if (r.charge === null) {
      out.push({
        kind: 'missing_charge_header',
        amountCny: '0.000000',
        detail: r.lost
          ? `${r.path}: sent, but its answer never arrived (a timeout, a dropped connection, or the run was killed while it was out), so its charge is unknown; the service may have charged it. ${r.path.startsWith('/v3/') && r.tasks > 0 ? 'Its tasks are looked up by tag at the next run of its pipeline, which prices it' : 'It has no tasks to look up: ask the service for the charge of this request'} (our request id ${r.call_id}, sent in the X-Svc-Request-ID header)`
          : `${r.path}: no X-Svc-Charge-CNY header; its cost is unknown`,
        callId: r.call_id,
        requestId: r.request_id ?? undefined,
      });
      continue;
    }
    if (r.estimated)
      estimates.push({
        callId: r.call_id,
        path: r.path,
        amountCny: fromMicros(toMicros(r.charge)),
        detail:
          toMicros(r.charge) === 0n
            ? `its answer never arrived, and id_list lists none of its tasks: the service created nothing, so nothing was charged (our request id ${r.call_id}, sent in the X-Svc-Request-ID header)`
            : `its answer never arrived; estimated from the USD cost id_list gave the tasks it created, and counted in the ledger's charges above (our request id ${r.call_id}, sent in the X-Svc-Request-ID header)`,
      });
    const api = r.path.startsWith('/v1/') ? 'v1' : (r.path.split('/')[2] ?? 'unknown');
    const m = toMicros(r.charge);
    ledgerByApi.set(api, (ledgerByApi.get(api) ?? 0n) + m);
    ledgerTotal += m;
  }

  // Spending per api: the account's statistics against the ledgers, when it has them for the day.
  let accountTotal = 0n;
  let unitemized = 0n;
  const apis = new Set<string>([...ledgerByApi.keys()]);
  if (dayStats) for (const k of Object.keys(dayStats)) if (k.startsWith('total_')) apis.add(k.slice(6));
  for (const api of [...apis].sort()) {
    if (api === 'v1' && typeof dayStats?.total_v1 !== 'number') {
      unitemized += ledgerByApi.get(api) ?? 0n;
      continue;
    }
    if (!dayStats) continue;
    const account = toMicros(dayStats[`total_${api}`] as number | undefined);
    const ledger = ledgerByApi.get(api) ?? 0n;
    accountTotal += account;
    const diff = account - ledger;
    if (diff >= TOLERANCE)
      foreign({
        kind: 'charge_not_in_ledger',
        api,
        amountCny: fromMicros(diff),
        detail: `${api}: the account spent ${fromMicros(account)} CNY on ${day}, the ledger knows ${fromMicros(ledger)}.`,
      });
    else if (-diff >= TOLERANCE)
      out.push({
        kind: 'ledger_charge_not_in_account',
        api,
        amountCny: fromMicros(diff),
        detail: `${api}: the ledger holds ${fromMicros(ledger)} CNY on ${day}, the account shows ${fromMicros(account)}`,
      });
  }

  // The balance chain: each balance should be the previous one less the charges of the calls
  // since, this one's and those of calls that gave no balance (an endpoint without the header, an
  // answer that never arrived, priced or not). From the day's last balance it goes on to the next
  // one seen, a later day's, or to the balance now.
  const push = (delta: bigint, where: string, callId?: string, requestId?: string | null) => {
    const d = movement(pool, delta, where, callId, requestId);
    if (d?.kind === 'unexplained_debit') foreign(d);
    else if (d) out.push(d);
  };
  let prev: { balance: bigint; callId: string } | null = null;
  let since = 0n;
  let closed = false;
  const first = all.findIndex((r) => r.day === day);
  for (let i = first < 0 ? all.length : first; i < all.length; i++) {
    const r = all[i]!;
    if (r.sandbox) continue;
    since += toMicros(r.charge);
    if (r.balance === null) continue;
    const bal = toMicros(r.balance);
    if (prev) push(bal - (prev.balance - since), `between call ${prev.callId} and ${r.call_id}`, r.call_id, r.request_id);
    if (r.day !== day) {
      closed = true;
      break;
    }
    prev = { balance: bal, callId: r.call_id };
    since = 0n;
  }
  if (prev && !closed && balanceNow !== null)
    push(balanceNow - (prev.balance - since), `since the last call in the ledger (${prev.callId}), up to now`);

  return {
    day,
    timezone,
    ledgerCny: fromMicros(ledgerTotal),
    refundedCny: fromMicros(refunded),
    accountCny: dayStats ? fromMicros(accountTotal) : null,
    ...(statisticsNote ? { statisticsNote } : {}),
    unitemizedCny: fromMicros(unitemized),
    balanceCny: balanceNow === null ? null : fromMicros(balanceNow),
    calls: rows.length,
    uncharged,
    discrepancies: out,
    unaccounted,
    estimates,
  };
}

/** A balance movement the calls' charges do not explain, or null; a rise is first matched against the refund rows' pool. */
function movement(pool: { micros: bigint }, delta: bigint, where: string, callId?: string, requestId?: string | null): Discrepancy | null {
  if (delta > 0n) {
    const matched = delta < pool.micros ? delta : pool.micros;
    pool.micros -= matched;
    delta -= matched;
  }
  if (delta >= TOLERANCE)
    return {
      kind: 'unmatched_refund',
      amountCny: fromMicros(delta),
      detail: `the balance rose by ${fromMicros(delta)} CNY ${where} beyond the refunds in the ledger (a top-up, or a refund of a task not collected yet)`,
      callId,
      requestId: requestId ?? undefined,
    };
  if (-delta >= TOLERANCE)
    return {
      kind: 'unexplained_debit',
      amountCny: fromMicros(delta),
      detail: `the balance fell by ${fromMicros(-delta)} CNY more than the ledger's charges ${where}.`,
      callId,
      requestId: requestId ?? undefined,
    };
  return null;
}
