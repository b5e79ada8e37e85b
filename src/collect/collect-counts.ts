import type { FamilyId } from '../catalog/index.js';

/** Calls a collector still has to make, by rate family (for the time left at the rate limits). */
export type CallsLeft = ReadonlyArray<{ family: FamilyId; calls: number }>;

/** What a collector reports: the run's counts and the calls it still has to make. */
export interface CollectCounts {
  posted: number;
  ready: number;
  collected: number;
  failed: number;
  pending: number;
  refetched: number;
  /** A `task_get` per task still waiting, by the rate family of its result endpoint. */
  callsLeft: CallsLeft;
}
