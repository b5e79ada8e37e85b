import type { Logger } from 'pino';
import type { ServiceClient } from '../client/index.js';
import type { PushCollector } from '../collect/index.js';
import type { Pipeline } from '../config/index.js';
import type { PlannedBatch, PriceHistory } from '../plan/index.js';
import type { RunStore, Warehouse } from '../warehouse/index.js';

/** Why posting stopped early, and what to tell the user; the run maps the kind to an exit code. */
export type PostStop = { kind: 'budget' | 'balance' | 'unavailable' | 'unknown' | 'interrupted'; reason: string };

/**
 * What posting needs of the run it posts for: its store, its client (whose every answer is
 * landed first), its clock and its notes. The run's own context (run/context.ts) extends it.
 */
export interface PostContext {
  o: { pipeline: Pick<Pipeline, 'name' | 'budget_cny'>; signal?: AbortSignal };
  wh: Warehouse;
  client: ServiceClient;
  store: RunStore;
  runId: string;
  log: Logger;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  note: (text: string) => void;
  /** Past prices from the ledger, read once when the budget first needs them. */
  priceHistory?: PriceHistory;
  /** The callback server and its loader, while this process posts with callbacks. */
  push?: PushCollector;
  /** Tasks a POST an endpoint takes, learnt from 40006 answers in this run (shared by its batches). */
  postSizes: Map<string, number>;
  /** A progress line while posting; `left`: the batches not posted yet. */
  postingLine: (left: readonly PlannedBatch[]) => Promise<void>;
}
