import { SERP_EXTRA_PAGE_FRACTION, extraDepthBlocks } from '../catalog/index.js';
import type { PriceHistory } from '../plan/index.js';
import type { ServiceReadingsRecord } from '../warehouse/index.js';

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

/** Rounded up to 0.0001. */
export const up4 = (n: number) => Math.ceil(n * 10_000 - 1e-6) / 10_000;
/** A CNY figure as the probe writes it, four decimals. */
export const cny4 = (n: number) => n.toFixed(4);
/** CNY of one SERP task of `depth` results, from the price of one of 10. */
export const priceAt = (base: number, depth: number) => up4(base * (1 + SERP_EXTRA_PAGE_FRACTION * extraDepthBlocks(depth)));

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
