import { ENDPOINTS, taskFunctionOf, type Endpoint, type FamilyId } from '../catalog/index.js';
import type { CallsLeft, CollectCounts } from '../collect/index.js';
// From their own modules, not the warehouse's index: `pipeline status` reads a live run through here, and starts
// without loading what the index brings (Arrow, the publishing and loading code).
import { RunStore, totalCounts, type Warehouse } from '../warehouse/index.js';

export type { CallsLeft, CollectCounts };

/** Calls still to make, by rate-limit family (a POST per batch left, a `task_get` per task left). */

/** What the estimate needs of the client's limiter. */
export interface RateLimits {
  /** Calls allowed per window now (lowered for a while after a 429). */
  currentLimit(family: FamilyId): number;
  /** Calls that could start at once, before the window slides (none counted when absent). */
  free?(family: FamilyId): number;
  /** The service's minute (shorter against a time-scaled emulator). */
  readonly windowMs: number;
}

/** Where a run stands, for a progress line. Counts are the run's own, from the tasks table. */
export interface RunProgress {
  /** Tasks the service created for this run. */
  posted: number;
  /** Tasks the last `tasks_ready` listed that are not fetched yet. */
  ready: number;
  collected: number;
  failed: number;
  /** Posted tasks not collected yet. */
  pending: number;
  /** POSTs still to send (0 once posting is over). */
  postsLeft: number;
  /** Re-parsed tasks fetched again this invocation (`tasks_fixed`). */
  refetched: number;
  /** CNY charged to this invocation so far, exact decimal string. */
  chargedCny: string;
  /** Time the calls left take at the rate limits; null when nothing is left to call. */
  timeLeftMs: number | null;
}

/**
 * Time the calls left take at the rate limits, assuming the service answers at once: the
 * calls the family's window still has room for go at once, the rest at its limit per
 * window; families are limited side by side (the slowest sets the pace). An estimate for
 * people, never a deadline.
 */
export function timeLeftAtRateMs(left: CallsLeft, limits: RateLimits): number | null {
  const calls = new Map<FamilyId, number>();
  for (const l of left) if (l.calls > 0) calls.set(l.family, (calls.get(l.family) ?? 0) + l.calls);
  if (calls.size === 0) return null;
  let ms = 0;
  for (const [family, n] of calls) {
    const waiting = Math.max(0, n - (limits.free?.(family) ?? 0));
    ms = Math.max(ms, (waiting / Math.max(1, limits.currentLimit(family))) * limits.windowMs);
  }
  return Math.round(ms);
}

/** `42s`, `3m 05s`, `2h 07m`: short enough for one terminal line. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** One progress line: what was posted, is ready, was collected, cost so far, and time left. */
export function progressLine(p: RunProgress): string {
  const parts = [
    ...(p.postsLeft > 0 ? [`posting (${p.postsLeft} POST${p.postsLeft === 1 ? '' : 's'} left)`] : []),
    `posted ${p.posted}`,
    `ready ${p.ready}`,
    `collected ${p.collected}/${p.posted}${p.failed ? ` (${p.failed} failed)` : ''}`,
    ...(p.refetched ? [`${p.refetched} re-parsed fetched again`] : []),
    `${Number(p.chargedCny).toFixed(4)} CNY so far`,
    p.timeLeftMs === null
      ? 'nothing left to call'
      : p.timeLeftMs < 1000
        ? 'under 1s left at the rate limit'
        : `~${formatDuration(p.timeLeftMs)} left at the rate limit`,
  ];
  return parts.join(' · ');
}

/** A progress line's figures while collecting (nothing left to post). */
export function collectProgress(p: CollectCounts, limits: RateLimits, chargedCny: string): RunProgress {
  const { callsLeft, ...counts } = p;
  return { ...counts, postsLeft: 0, chargedCny, timeLeftMs: timeLeftAtRateMs(callsLeft, limits) };
}

/**
 * A progress line's figures while posting: the run's counts from the tasks table, and as
 * calls left a POST per batch still to send plus a `task_get` per task posted and not
 * collected or still to post.
 */
export async function postingProgress(
  wh: Warehouse,
  runId: string,
  batchesLeft: readonly { endpoint: Endpoint; tasks: number }[],
  limits: RateLimits,
  chargedCny: string,
): Promise<RunProgress> {
  const rows = await new RunStore(wh, runId).countsByEndpoint();
  const left: { family: FamilyId; calls: number }[] = [];
  const gets = (postId: string, calls: number) => {
    const post = ENDPOINTS.find((e) => e.id === postId);
    const family = post ? taskFunctionOf(post)?.get.family : undefined;
    if (family && calls > 0) left.push({ family, calls });
  };
  for (const b of batchesLeft) {
    left.push({ family: b.endpoint.family, calls: 1 });
    gets(b.endpoint.id, b.tasks);
  }
  for (const r of rows) gets(r.endpointId, r.pending);
  return {
    ...totalCounts(rows),
    ready: 0,
    refetched: 0,
    postsLeft: batchesLeft.length,
    chargedCny,
    timeLeftMs: timeLeftAtRateMs(left, limits),
  };
}
