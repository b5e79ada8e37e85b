import { ServiceClient, type RawResponse } from '../client/index.js';
import type { ResolvedCollection } from '../config/index.js';
import type { PlannedBatch } from '../plan/index.js';
import { landedAnswer, ledgerWriter, RawLanding, RunStore, type Warehouse } from '../warehouse/index.js';
import { fromMicros, toMicros, type PostContext } from '../post/index.js';
import { postingProgress } from './progress.js';
import type { RunOptions } from './run-options.js';
import type { RunSummary } from './summary.js';

/** Why posting or collecting stopped early, and what to tell the user. */
export type Stop = { kind: NonNullable<RunSummary['stopKind']>; reason: string };

/**
 * One run id's working set: what posting needs of it (PostContext: its store, its client whose
 * every answer is landed first, its clock, its notes), with the run's own options, the CNY
 * charged so far and how it collects; posting takes it as it is.
 */
export interface RunContext extends PostContext {
  o: RunOptions;
  /** CNY charged to this invocation so far (exact, in micro-CNY), for progress lines. */
  charged: { micros: bigint };
  collection: ResolvedCollection;
}

/** What every run id of one invocation shares. */
export interface RunWorld {
  o: RunOptions;
  wh: Warehouse;
  /** The landing's own connection, for the raw index rows of free reads. */
  indexOn: Warehouse;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  charged: { micros: bigint };
  collection: ResolvedCollection;
  /** Tasks a POST per endpoint, learnt from 40006 answers: remembered for the whole invocation. */
  postSizes?: Map<string, number>;
}

/** The context of run `runId` (this invocation's run, or an older one it settles). */
export function makeContext(w: RunWorld, runId: string): RunContext {
  const { o, wh } = w;
  // Free reads (task_get, tasks_ready) are indexed in batches: a commit per read would cost
  // more CPU than the read's rows. Whatever reads the index flushes first.
  const ctx = { runId, pipeline: o.pipeline.name };
  const landing = new RawLanding(wh, ctx, { deferFreeReads: true, indexOn: w.indexOn });
  // The charge headers seen by this invocation, summed exactly, for progress lines.
  const land = async (raw: RawResponse) => {
    await landing.land(raw);
    w.charged.micros += toMicros(raw.charge.chargeCny);
  };
  const store = new RunStore(wh, runId, o.pipeline.name);
  const c: RunContext = {
    o,
    wh,
    runId,
    store,
    client: new ServiceClient({
      baseUrl: o.baseUrl,
      apiKey: o.apiKey,
      land,
      // Before a charged POST goes: its id on the tasks it sends, and its ledger row (charge
      // unknown), in one transaction on the connection that owns the tasks.
      sending: (call) =>
        wh.transaction(async () => {
          await store.recordSending(call.tags, call.callId);
          await ledgerWriter.sent(wh, ctx, call);
        }),
      notSent: landing.notSent,
      // A paid answer landed before (a kill between its landing and keeping what it said) is used again, not bought twice.
      landedAnswer: (hash, path) => landedAnswer(wh, hash, path),
      dispatcher: o.dispatcher,
      // Ctrl-C ends the waits for the rate limit too: a call still waiting is not sent (ETL_INTERRUPTED).
      limits: o.signal ? { ...o.limits, signal: o.signal } : o.limits,
      now: w.now,
      sleep: w.sleep,
    }),
    log: o.logger.child({ runId, pipeline: o.pipeline.name }),
    now: w.now,
    sleep: w.sleep,
    note: (text: string) => o.onProgress?.({ kind: 'note', text }),
    charged: w.charged,
    collection: w.collection,
    postSizes: (w.postSizes ??= new Map()),
    postingLine: (left) => postingLine(c, left),
  };
  return c;
}

/** A progress line while posting: what is posted, collected and charged, and the time left at the rate limit. */
export async function postingLine(c: RunContext, left: readonly PlannedBatch[]): Promise<void> {
  if (!c.o.onProgress) return;
  const rest = left.map((b) => ({ endpoint: b.endpoint, tasks: b.tasks.length }));
  c.o.onProgress({ kind: 'collect', ...(await postingProgress(c.wh, c.runId, rest, c.client.limiter, fromMicros(c.charged.micros))) });
}
