import { extraDepthBlocks, SERP_EXTRA_PAGE_FRACTION } from '../catalog/index.js';
import type { Plan } from './plan.js';

/** Where a price came from, so a user knows how far to trust the estimate. */
export type PriceSource = 'ledger:pipeline' | 'ledger:endpoint' | 'rates' | 'sandbox' | 'unknown';

export interface TaskPrice {
  endpointId: string;
  /** CNY per task, or null when unknown. */
  cnyPerTask: number | null;
  source: PriceSource;
  note?: string;
}

/** What the warehouse knows of past prices: average CNY per unit posted (catalog `taskUnits`). */
export interface PriceHistory {
  /** `${pipeline}\0${endpointId}` → CNY per unit, from this pipeline's own past POSTs. */
  byPipeline: Map<string, number>;
  /** endpointId → CNY per unit over every pipeline. */
  byEndpoint: Map<string, number>;
  /** CNY charged per USD of raw cost, seen in the ledger (to convert user_data rates). */
  cnyPerUsd: number | null;
}

type Tree = Record<string, unknown>;

/**
 * Prices each endpoint of a plan: first from this pipeline's own past charges (the
 * `X-Svc-Charge-CNY` of earlier POSTs per task: exact for a nightly pipeline that does not
 * change), then from any pipeline's, then from the account's `user_data` base rates
 * (`rates.<api>.<mode>.<engine>.priority_*`, raw USD converted at the ledger's CNY/USD).
 * A base rate covers the first 10 SERP results; each further block of 10 the tasks ask for
 * is added at the catalog's fraction of the base (SERP_EXTRA_PAGE_FRACTION), averaged over
 * the endpoint's tasks, so a deep SERP is not priced as if it were 10 results.
 */
export function priceTasks(
  plan: Plan,
  history: PriceHistory,
  rates: Tree | undefined,
  highPriority: (endpointId: string) => boolean,
): TaskPrice[] {
  const out = new Map<string, TaskPrice>();
  for (const t of plan.tasks) {
    const id = t.endpoint.id;
    if (out.has(id)) continue;
    // Past prices are per unit: the plan's tasks of the endpoint weigh their depth.
    const deep = t.endpoint.api === 'serp' ? depthFactor(plan, id) : { factor: 1, blocks: 0 };
    const own = history.byPipeline.get(`${plan.pipeline}\0${id}`);
    if (own !== undefined) {
      out.set(id, { endpointId: id, cnyPerTask: own * deep.factor, source: 'ledger:pipeline' });
      continue;
    }
    const any = history.byEndpoint.get(id);
    if (any !== undefined) {
      out.set(id, {
        endpointId: id,
        cnyPerTask: any * deep.factor,
        source: 'ledger:endpoint',
        note: 'average of other pipelines, per unit of depth',
      });
      continue;
    }
    const usd = rateUsd(rates, t.endpoint.path, t.endpoint.mode, highPriority(id));
    const depthNote =
      deep.blocks > 0
        ? ` plus ${fmt(deep.blocks)} further block(s) of 10 results at ${SERP_EXTRA_PAGE_FRACTION * 100}% of it (assumed: the spec does not say; a run's budget counts a block at the base price until its charges tell); unused depth is refunded`
        : '';
    if (usd !== null && history.cnyPerUsd !== null) {
      out.set(id, { endpointId: id, cnyPerTask: usd * history.cnyPerUsd * deep.factor, source: 'rates', note: `base rate${depthNote}` });
    } else {
      out.set(id, {
        endpointId: id,
        cnyPerTask: null,
        source: 'unknown',
        // The account's rates are in USD; the CNY charged per USD shows only in a past charge.
        note:
          usd === null
            ? 'no rate in user_data and no past charge'
            : `${(usd * deep.factor).toPrecision(3)} USD a task (base rate${depthNote}); no past charge gives its CNY: pass --cny-per-usd`,
      });
    }
  }
  return [...out.values()];
}

/** The average of (1 + fraction × further blocks) over an endpoint's tasks, and the average block count. */
function depthFactor(plan: Plan, endpointId: string): { factor: number; blocks: number } {
  const tasks = plan.tasks.filter((t) => t.endpoint.id === endpointId);
  const blocks =
    tasks.reduce((a, t) => a + extraDepthBlocks(typeof t.spec.depth === 'number' ? t.spec.depth : undefined), 0) /
    Math.max(1, tasks.length);
  return { factor: 1 + SERP_EXTRA_PAGE_FRACTION * blocks, blocks };
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/**
 * Finds the base rate of an endpoint in the `rates` tree (`<api>` > `<function>` >
 * `<func_type>` > priority). The spec does not fix how `<func_type>` is spelled, so the
 * path segments between the api and the mode are tried from the most to the least specific
 * (`engA/organic`, `engA`, `organic`), then `default`.
 */
function rateUsd(rates: Tree | undefined, path: string, mode: string, high: boolean): number | null {
  const seg = path.split('/').filter(Boolean); // v3, api, ..., mode
  const api = (rates?.[seg[1] ?? ''] ?? undefined) as Tree | undefined;
  const fn = (api?.[mode] ?? undefined) as Tree | undefined;
  if (!fn) return null;
  const middle = seg.slice(2, seg.indexOf(mode) > 0 ? seg.indexOf(mode) : seg.length - 1);
  const candidates = [middle.join('/'), ...middle, 'default'];
  const leaf = candidates.map((k) => fn[k]).find((v) => v !== null && typeof v === 'object') as Tree | undefined;
  const v = leaf?.[high ? 'priority_high' : 'priority_normal'];
  return typeof v === 'number' ? v : null;
}
