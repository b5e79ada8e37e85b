import type { Dispatcher } from 'undici';
import { endpoint } from '../catalog/index.js';
import { ServiceClient, type ClientOptions, type Lander } from '../client/index.js';
import { readPriceHistory } from '../plan/index.js';
import type { ServiceReadingsRecord, Warehouse } from '../warehouse/index.js';
import { readClockSkew } from './probe-clock.js';
import { cny4, planProbe, PROBE_LIMIT_CNY, type ProbePlan } from './probe-plan.js';
import { probeRecord } from './probe-record.js';
import { probeTask } from './probe-task.js';

export interface ProbeOptions {
  baseUrl: string;
  apiKey: string;
  /** The warehouse whose ledger prices the plan (none yet: the spec's reference price). */
  wh?: Warehouse;
  /** Landing of every answer (raw/ and ledger: the probe's charged POST is in the ledger like a run's). */
  land?: Lander;
  sending?: ClientOptions['sending'];
  notSent?: ClientOptions['notSent'];
  /** The last probe's record (its unit price of a SERP task prices this plan when no run's does). */
  last?: ServiceReadingsRecord | null;
  /** Without it only the plan is made and the free user_data and clock are read. */
  yes: boolean;
  dispatcher?: Dispatcher;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  /** Between two looks at the ready list; default 15 s (4 a minute of the SERP family's 60). */
  pollMs?: number;
  /** How long to wait for the task to be done; default 15 minutes. */
  maxWaitMs?: number;
}

export interface ProbeOutcome {
  plan: ProbePlan;
  /** Null without `--yes`: nothing charged was called and nothing recorded. */
  record: ServiceReadingsRecord | null;
}

/**
 * `pipeline doctor --probe`: finds which reading the service follows at each point the spec
 * leaves open, with one charged POST (at most PROBE_LIMIT_CNY) and free reads. Without
 * `yes` it returns the plan only.
 */
export async function runProbe(o: ProbeOptions): Promise<ProbeOutcome> {
  const now = o.now ?? (() => new Date());
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const plan = planProbe(o.wh ? await readPriceHistory(o.wh) : null, o.last);
  if (!o.yes) return { plan, record: null };
  if (plan.costCny > PROBE_LIMIT_CNY)
    throw new Error(`the probe would cost ${cny4(plan.costCny)} CNY, over its ${PROBE_LIMIT_CNY} CNY limit`);
  const clientOptions: ClientOptions = {
    baseUrl: o.baseUrl,
    apiKey: o.apiKey,
    land: o.land ?? (async () => {}),
    sending: o.sending,
    notSent: o.notSent,
    dispatcher: o.dispatcher,
    now,
    maxAttempts: 3,
    timeoutMs: 30_000,
  };
  const client = new ServiceClient(clientOptions);
  const readings = {} as ServiceReadingsRecord['readings'];
  readings.rateLimitBody = {
    value: 'not-probed',
    detail:
      'would need exceeding a rate limit on the real service (abusive, and charged on charged paths); the client accepts both HTTP 429 and 40202 in an HTTP 200 body',
  };

  const user = await client.call(endpoint('appendix.user_data'));
  const ud = (user.envelope.tasks?.[0]?.result?.[0] ?? {}) as { login?: string; money?: { balance?: number } };
  const balance0 = typeof ud.money?.balance === 'number' ? ud.money.balance : null;
  const clock = await readClockSkew(o.baseUrl, now, o.dispatcher);
  readings.clockSkewSeconds = clock.reading;

  const maxWaitMs = o.maxWaitMs ?? 15 * 60_000;
  const pollMs = o.pollMs ?? 15_000;
  const charged = await probeTask({ plan, client, clientOptions, readings, clock, balance0, now, sleep, pollMs, maxWaitMs });
  return { plan, record: probeRecord(o.baseUrl, ud.login, charged.chargedCny, charged.serpTaskCny, readings, now) };
}
