import { request, type Dispatcher } from 'undici';
import { endpoint, SERP_EXTRA_PAGE_FRACTION, extraDepthBlocks, taskUnits } from '../catalog/index.js';
import { ServiceClient, type CallResult, type Lander } from '../client/index.js';
import { readPriceHistory, type PriceHistory } from '../plan/index.js';
import type { ServiceReadingsRecord, Warehouse } from '../warehouse/index.js';
import { serviceSkewMs } from './doctor.js';

/** The most `pipeline doctor --probe` may cost, CNY. */
export const PROBE_LIMIT_CNY = 0.05;
/**
 * The price of one SERP task of the first 10 results when the ledger knows none: the only
 * SERP task price the spec gives (Billing: events task_post "reference about 0.0240 CNY per
 * task"; standard organic tasks are not priced there and are taken to cost no more).
 */
export const SPEC_SERP_TASK_CNY = 0.024;
/**
 * Depths the probe task may ask for: over 10, so a refund of unused depth can show; the deepest
 * the limit affords is taken (a long-tail keyword is more likely to fall short of a deeper page).
 */
export const PROBE_DEPTHS = [100, 90, 80, 70, 60, 50, 40, 30, 20] as const;
/** A long-tail keyword (seven words): few organic results exist, so some of the depth is likely refunded. */
export const PROBE_KEYWORD = 'waterproof trail running shoes for wide feet';
export const PROBE_ENDPOINT = 'serp.engA.organic.task_post';
/** The ledger's pipeline name of the probe's calls. */
export const PROBE_PIPELINE = 'doctor-probe';

export interface ProbePlan {
  /** CNY of one depth-10 task, and where it came from. */
  baseCny: number;
  baseSource: 'ledger' | 'spec'; // ledger: a run's charges, or the last probe's
  /** Depth of the probe task. */
  depth: number;
  /** Tasks in the one charged POST: 2 when both fit the limit (the second tells 1 or 100 tasks a POST), else 1. */
  tasks: 1 | 2;
  /** The most the probe can be charged, CNY, rounded up to 0.0001. */
  costCny: number;
  calls: Array<{ call: string; charged: boolean; cny: number }>;
}

const up4 = (n: number) => Math.ceil(n * 10_000 - 1e-6) / 10_000;
const cny4 = (n: number) => n.toFixed(4);
const priceAt = (base: number, depth: number) => up4(base * (1 + SERP_EXTRA_PAGE_FRACTION * extraDepthBlocks(depth)));

/**
 * The probe's calls and what they can cost, from the ledger's price of a SERP task (or the
 * spec's reference): a second task in the POST when a depth-20 task and it fit the limit, then
 * the deepest depth that keeps the POST within it.
 */
export function planProbe(history: Pick<PriceHistory, 'byPipeline'> | null, last?: ServiceReadingsRecord | null): ProbePlan {
  // The probe's own POSTs are in the ledger without task rows (their depth unknown there): its
  // unit price comes from its record instead; runs' POSTs are priced per unit of depth.
  const runs = [...(history?.byPipeline ?? [])].filter(([k]) => k.endsWith(`\0${PROBE_ENDPOINT}`) && !k.startsWith(`${PROBE_PIPELINE}\0`));
  const known = runs.length ? Math.max(...runs.map(([, v]) => v)) : (last?.serpTaskCny ?? undefined);
  const baseCny = known ?? SPEC_SERP_TASK_CNY;
  const second = up4(baseCny);
  const tasks: 1 | 2 = priceAt(baseCny, 20) + second <= PROBE_LIMIT_CNY ? 2 : 1;
  const extra = tasks === 2 ? second : 0;
  const depth = PROBE_DEPTHS.find((d) => priceAt(baseCny, d) + extra <= PROBE_LIMIT_CNY) ?? 20;
  const post = up4(priceAt(baseCny, depth) + extra);
  return {
    baseCny,
    baseSource: known === undefined ? 'spec' : 'ledger',
    depth,
    tasks,
    costCny: post,
    calls: [
      { call: 'GET appendix/user_data (balance, login) ×2', charged: false, cny: 0 },
      { call: "GET / (the service's Date header)", charged: false, cny: 0 },
      {
        call: `POST serp/engA/organic/task_post: ${tasks === 2 ? `2 tasks (depth ${depth} and depth 10)` : `1 task (depth ${depth})`}`,
        charged: true,
        cny: post,
      },
      { call: 'GET serp/engA/organic/tasks_ready (until the task is listed)', charged: false, cny: 0 },
      { call: 'POST serp/id_list (last hour, by the service clock)', charged: false, cny: 0 },
      { call: 'GET serp/engA/organic/task_get/advanced/{id} and {id}.ai', charged: false, cny: 0 },
    ],
  };
}

export interface ProbeOptions {
  baseUrl: string;
  apiKey: string;
  /** The warehouse whose ledger prices the plan (none yet: the spec's reference price). */
  wh?: Warehouse;
  /** Landing of every answer (raw/ and ledger: the probe's charged POST is in the ledger like a run's). */
  land?: Lander;
  sending?: ConstructorParameters<typeof ServiceClient>[0]['sending'];
  notSent?: ConstructorParameters<typeof ServiceClient>[0]['notSent'];
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

type Task = NonNullable<CallResult['envelope']['tasks']>[number];

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
  const clientOptions = {
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
  const r = {} as ServiceReadingsRecord['readings'];
  r.rateLimitBody = {
    value: 'not-probed',
    detail:
      'would need exceeding a rate limit on the real service (abusive, and charged on charged paths); the client accepts both HTTP 429 and 40202 in an HTTP 200 body',
  };

  const user = await client.call(endpoint('appendix.user_data'));
  const ud = (user.envelope.tasks?.[0]?.result?.[0] ?? {}) as { login?: string; money?: { balance?: number } };
  const balance0 = typeof ud.money?.balance === 'number' ? ud.money.balance : null;

  let skewMs: number | null = null;
  try {
    // The Date header is cut to the second: the service's time is half a second past it on average.
    const cut = await serviceSkewMs(o.baseUrl, now, o.dispatcher);
    skewMs = cut === null ? null : cut + 500;
    r.clockSkewSeconds =
      skewMs === null
        ? { value: 'unknown', detail: 'the service sent no Date header' }
        : {
            value: Math.round(skewMs / 1000),
            detail: `the service's clock is ${Math.abs(skewMs / 1000).toFixed(1)} s ${skewMs >= 0 ? 'ahead of' : 'behind'} ours (its Date header, whole seconds, read as mid-second)`,
          };
  } catch (err) {
    r.clockSkewSeconds = { value: 'unknown', detail: `could not read the service's Date header: ${(err as Error).message}` };
  }

  // The one charged call. The client never sends it again once it may have been charged (a lost
  // answer leaves the readings that need it unknown); only a refusal that created nothing is retried.
  const tasks: Record<string, unknown>[] = [
    { keyword: PROBE_KEYWORD, location_code: 2840, language_code: 'en', depth: plan.depth, tag: 'doctor-probe-refund' },
  ];
  if (plan.tasks === 2)
    tasks.push({ keyword: PROBE_KEYWORD, location_code: 2840, language_code: 'en', depth: 10, tag: 'doctor-probe-second' });
  let charged = 0;
  let serpTaskCny: number | null = null;
  let post: CallResult;
  const postedAt = now().getTime();
  try {
    post = await client.call(endpoint(PROBE_ENDPOINT), { tasks });
  } catch (err) {
    const why = `the probe's task_post failed: ${(err as Error).message}`;
    for (const k of ['refunds', 'asyncTasksPerPost', 'readyListPaging', 'aiCodes'] as const) r[k] = { value: 'unknown', detail: why };
    return { plan, record: finish(o, ud.login, 0, null, r, now) };
  }
  charged += Number(post.charge.chargeCny ?? 0);
  const [first, second] = post.envelope.tasks ?? [];
  const units = (post.envelope.tasks ?? []).reduce(
    (a, t) => a + (t.status_code === 20100 ? taskUnits('serp', t === first ? tasks[0]! : tasks[1]!) : 0),
    0,
  );
  if (units > 0 && post.charge.chargeCny !== null) serpTaskCny = Number(post.charge.chargeCny) / units;
  const chargeNote = charged > plan.costCny ? ` (charged ${cny4(charged)} CNY, over the stated ${cny4(plan.costCny)})` : '';
  if (plan.tasks === 1) {
    r.asyncTasksPerPost = {
      value: 'not-probed',
      detail: `2 tasks (${cny4(priceAt(plan.baseCny, 20) + up4(plan.baseCny))} CNY at the ${plan.baseSource}'s price) would pass the ${PROBE_LIMIT_CNY} CNY limit; a run with the ledger's price of a SERP task lets the next probe post 2`,
    };
  } else if (second?.status_code === 40006) {
    r.asyncTasksPerPost = { value: 1, detail: `the second task of a 2-task POST got 40006 (not charged)${chargeNote}` };
  } else if (second?.status_code === 20100) {
    r.asyncTasksPerPost = {
      value: 100,
      detail: `both tasks of a 2-task POST were created (the spec's other figure is 100 a POST)${chargeNote}`,
    };
  } else {
    r.asyncTasksPerPost = {
      value: 'unknown',
      detail: `the second task got ${second?.status_code ?? 'no answer'} ${second?.status_message ?? ''}`.trim(),
    };
  }
  if (!first?.id || first.status_code !== 20100) {
    const why = `the probe task was not created (${first?.status_code ?? 'no task'} ${first?.status_message ?? ''})`.trim();
    for (const k of ['refunds', 'readyListPaging', 'aiCodes'] as const) r[k] = { value: 'unknown', detail: why };
    return { plan, record: finish(o, ud.login, charged, serpTaskCny, r, now) };
  }
  const balance1 = post.charge.balanceCny !== null ? Number(post.charge.balanceCny) : balance0 !== null ? balance0 - charged : null;
  const costAtPost = typeof first.cost === 'number' ? first.cost : null;

  // Wait for it, by the free ready list.
  const mine = new Set([first.id, ...(second?.status_code === 20100 && second.id ? [second.id] : [])]);
  let listedMost = 0;
  let ready = false;
  const deadline = now().getTime() + (o.maxWaitMs ?? 15 * 60_000);
  for (;;) {
    const list = await client.call(endpoint('serp.engA.organic.tasks_ready'));
    const items = (list.envelope.tasks ?? []).flatMap((t) => (t.result ?? []) as { id?: string }[]);
    listedMost = Math.max(listedMost, items.length);
    if (items.some((i) => i.id === first.id)) {
      ready = true;
      break;
    }
    if (now().getTime() >= deadline) break;
    await sleep(o.pollMs ?? 15_000);
  }
  r.readyListPaging = {
    value: 'unknown',
    detail: `one tasks_ready answer listed at most ${listedMost} task(s); a page's size shows only with more ready tasks than a page holds (not probed: it would need buying them)`,
  };

  // id_list (free), the last hour bounded by the service's clock, then by ours: does the window need the service's?
  // A task is listed by its posting time, to the second: let that second pass first.
  await sleep(Math.max(0, 2000 - (now().getTime() - postedAt)));
  const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/:/g, '-').slice(0, 19) + ' +00:00';
  const listed = async (clock: () => Date): Promise<boolean | string> => {
    // A client on that clock: it checks the bounds against it, as the service does against its own.
    const c = new ServiceClient({ ...clientOptions, now: clock });
    const at = clock().getTime();
    try {
      const ids = await c.call(endpoint('serp.id_list'), {
        tasks: [{ datetime_from: stamp(at - 3_600_000), datetime_to: stamp(at), limit: 1000, sort: 'desc' }],
      });
      return (ids.envelope.tasks?.[0]?.result ?? []).some((x) => (x as { id?: string }).id === first.id);
    } catch (err) {
      return (err as Error).message;
    }
  };
  const byService = await listed(() => new Date(now().getTime() + (skewMs ?? 0)));
  const byOurs = skewMs === null ? byService : await listed(now);
  const say = (v: boolean | string) => (v === true ? 'lists the task' : v === false ? 'misses the task' : `failed (${v})`);
  const idListNote =
    skewMs === null
      ? `; id_list bounded by our clock ${say(byOurs)}`
      : `; id_list bounded by the service's clock ${say(byService)}, by ours ${say(byOurs)}`;
  if (typeof r.clockSkewSeconds.value === 'number') r.clockSkewSeconds.detail += idListNote;

  if (!ready) {
    const why = `the task was not done within ${Math.round((o.maxWaitMs ?? 900_000) / 1000)} s; it stays in the ready list for a run to collect`;
    r.refunds = { value: 'unknown', detail: why };
    r.aiCodes = { value: 'unknown', detail: why };
    return { plan, record: finish(o, ud.login, charged, serpTaskCny, r, now) };
  }

  const get = await client.call(endpoint('serp.engA.organic.task_get.advanced'), { taskId: first.id });
  const done: Task | undefined = get.envelope.tasks?.[0];
  for (const id of mine)
    if (id !== first.id) await client.call(endpoint('serp.engA.organic.task_get.advanced'), { taskId: id }).catch(() => {});
  const organic = ((done?.result?.[0] as { items?: { type?: string }[] } | undefined)?.items ?? []).filter(
    (i) => i.type === 'organic',
  ).length;
  const user2 = await client.call(endpoint('appendix.user_data'));
  const balance2 = (user2.envelope.tasks?.[0]?.result?.[0] as { money?: { balance?: number } } | undefined)?.money?.balance;
  const costAtGet = typeof done?.cost === 'number' ? done.cost : null;
  const back = balance1 !== null && typeof balance2 === 'number' ? Math.round((balance2 - balance1) * 10_000) / 10_000 : null;
  const seen = `cost ${costAtPost ?? '?'} USD at creation, ${costAtGet ?? '?'} USD at task_get; balance ${balance1 ?? '?'} → ${balance2 ?? '?'} CNY after completion; ${organic} organic result(s) of depth ${plan.depth}`;
  if (costAtPost !== null && costAtGet !== null && costAtGet < costAtPost)
    r.refunds = { value: 'task-cost', detail: `the done task's cost dropped: ${seen}` };
  else if (back !== null && back > 0)
    r.refunds = {
      value: 'balance',
      detail: `the cost stayed, the balance rose by ${cny4(back)} CNY: ${seen} (other spending on the account at the same time would hide it)`,
    };
  else if (costAtPost === null || costAtGet === null || back === null) r.refunds = { value: 'unknown', detail: `not enough seen: ${seen}` };
  else r.refunds = { value: 'none-seen', detail: `no refund: ${seen}${organic >= plan.depth ? ' (the depth was served in full)' : ''}` };

  r.aiCodes = await aiCode(o, `${get.path.replace(/\/+$/, '')}.ai`, o.dispatcher);
  return { plan, record: finish(o, ud.login, charged, serpTaskCny, r, now) };
}

/** GET `task_get/advanced/{id}.ai` (free, no extra charge): the status code it answers with, and its shape. */
async function aiCode(o: ProbeOptions, path: string, dispatcher?: Dispatcher): Promise<ServiceReadingsRecord['readings']['aiCodes']> {
  try {
    const res = await request(o.baseUrl.replace(/\/+$/, '') + path, {
      method: 'GET',
      headers: { authorization: `Bearer ${o.apiKey}`, 'content-type': 'application/json' },
      dispatcher,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    const body = JSON.parse(text) as { status_code?: unknown; tasks?: unknown; items?: unknown; id?: unknown };
    const shape =
      'tasks' in body ? 'a standard envelope' : Array.isArray(body.items) ? 'the .ai shape (id, status_code, items)' : 'neither shape';
    return typeof body.status_code === 'number'
      ? { value: body.status_code, detail: `HTTP ${res.statusCode}, ${shape}` }
      : { value: 'unknown', detail: `HTTP ${res.statusCode}, no status_code; ${shape}` };
  } catch (err) {
    return { value: 'unknown', detail: `the .ai task_get failed: ${(err as Error).message}` };
  }
}

function finish(
  o: ProbeOptions,
  login: string | undefined,
  chargedCny: number,
  serpTaskCny: number | null,
  readings: ServiceReadingsRecord['readings'],
  now: () => Date,
): ServiceReadingsRecord {
  const ordered = {
    refunds: readings.refunds,
    rateLimitBody: readings.rateLimitBody,
    clockSkewSeconds: readings.clockSkewSeconds,
    asyncTasksPerPost: readings.asyncTasksPerPost,
    readyListPaging: readings.readyListPaging,
    aiCodes: readings.aiCodes,
  };
  return {
    version: 1,
    probedAt: now().toISOString(),
    account: login ?? null,
    baseUrl: o.baseUrl,
    chargedCny: cny4(chargedCny),
    serpTaskCny,
    readings: ordered,
  };
}
