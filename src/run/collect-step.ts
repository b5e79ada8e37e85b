import { endpoint } from '../catalog/index.js';
import {
  collectAll,
  crawlCollector,
  InFlight,
  loadLandedLeftovers,
  pullCollector,
  pushCollector,
  rereadNote,
  type Collector,
  type CollectRun,
} from '../collect/index.js';
import { EtlError } from '../errors.js';
import { damagedNotes } from '../warehouse/index.js';
import { crawlReadsOf, CRAWL_POST_ENDPOINTS } from '../jobs/index.js';
import { postingLine, type RunContext, type Stop } from './context.js';
import { settleLive } from '../post/index.js';
import { fromMicros } from '../post/index.js';
import { collectProgress } from './progress.js';

/**
 * Collects what the run posted: first what is already landed but not loaded (costs no
 * call), then the collectors in order (`collect/collectors.ts`): push when this process
 * posted with callbacks (it falls back to pull: what it left is swept), pull for the rest,
 * and crawl watching. Collection errors end the run as partial (the tasks stay posted in
 * state), never as a crash.
 */
export async function collectStep(c: RunContext, opts: { sweep?: boolean; timeoutMs?: number }): Promise<{ stop: Stop | null }> {
  // The functions to poll come from state, so tasks of a job since removed from the file are still collected.
  const postEndpoints = (await c.store.waitingEndpointIds()).flatMap((id) => {
    try {
      const e = endpoint(id);
      // Live answers are loaded from the landing as they come (settleLiveTasks); nothing to poll.
      return e.mode === 'live' ? [] : [e];
    } catch {
      c.log.error({ endpointId: id }, 'tasks of an endpoint the catalog no longer knows cannot be collected');
      return [];
    }
  });
  if (postEndpoints.length === 0) {
    // Nothing to poll, but a killed run may have left landed answers unindexed (free reads whose
    // rows were deferred, damaged files): the sweep indexes them, so their ledger rows are kept.
    if (opts.sweep) await sweepLeftovers(c);
    return { stop: null };
  }
  // Crawls (on-page) have no ready list: they are watched and read by their own collector.
  const pullEndpoints = postEndpoints.filter((e) => !CRAWL_POST_ENDPOINTS.has(e.id));
  const collectors: Collector[] = [
    ...(c.push ? [pushCollector(c.push)] : []),
    ...(pullEndpoints.length > 0 ? [pullCollector(pullEndpoints)] : []),
    ...(pullEndpoints.length < postEndpoints.length ? [crawlCollector((job) => crawlReadsOf(c.o.pipeline.jobs, job))] : []),
  ];
  const run: CollectRun = {
    client: c.client,
    wh: c.wh,
    store: c.store,
    now: c.now,
    sleep: c.sleep,
    ...(c.o.signal ? { signal: c.o.signal } : {}),
    pollIntervalMs: c.o.pollIntervalMs ?? 30_000,
    deadlineAt: c.now().getTime() + (opts.timeoutMs ?? c.collection.deadlineMs),
    // One registry for the whole collection: push's, when this process posted with callbacks.
    inFlight: c.push?.inFlight ?? new InFlight(),
    onProgress: (p) => c.o.onProgress?.({ kind: 'collect', ...collectProgress(p, c.client.limiter, fromMicros(c.charged.micros)) }),
    onNote: (text) => c.note(text),
  };
  try {
    const sweep = opts.sweep ?? false;
    if (sweep) await sweepLeftovers(c);
    const { pending, stopped } = await collectAll(collectors, run, { sweep });
    if (stopped) return { stop: await leftStop(c, 0) };
    await postingLine(c, []); // the last line counts what the loader committed after the last poll
    return { stop: await leftStop(c, pending) };
  } catch (err) {
    if (!(err instanceof EtlError) || err.code === 'ETL_AUTH') throw err;
    // Ctrl-C while a call waited for the rate limit: it was not sent, and what is left stays posted.
    if (err.code === 'ETL_INTERRUPTED' || c.o.signal?.aborted) return { stop: await leftStop(c, 0) };
    c.log.error({ code: err.code }, err.message);
    return {
      stop: { kind: 'unavailable', reason: `collection stopped: ${err.message}; what was posted stays in state, run again to collect it` },
    };
  }
}

/** Loads what the run holds already landed (no call), after indexing landed files the index does not know. */
async function sweepLeftovers(c: RunContext): Promise<void> {
  const left = await loadLandedLeftovers(c.wh, c.runId, c.now());
  if (left.collected > 0)
    c.note(`${left.collected} task(s) already landed (callbacks or fetches before a stop) loaded without calling the service`);
  if (left.error) c.log.warn(left.error);
  for (const n of damagedNotes(left.damaged)) {
    c.note(n);
    c.log.warn(n);
  }
  if (left.rereadPlain.length > 0) c.note(rereadNote(left.rereadPlain));
}

/** Why collection ended with tasks still out (`pending` from pull, or read from state). */
async function leftStop(c: RunContext, pending: number): Promise<Stop | null> {
  const left = pending > 0 ? pending : (await c.store.pendingTaskIds()).length;
  if (left === 0) return null;
  if (c.o.signal?.aborted) return { kind: 'interrupted', reason: `interrupted with ${left} task(s) still to collect; run again to resume` };
  return { kind: 'unknown', reason: `${left} task(s) still to collect at the collection deadline; run again to collect them` };
}

/** Loads live answers a crash left unloaded, and records live tasks whose answer was lost. */
export async function settleLiveTasks(c: RunContext): Promise<void> {
  const r = await settleLive({ wh: c.wh, store: c.store, runId: c.runId, at: c.now(), isLive });
  if (r.loaded) c.note(`${r.loaded} live answer(s) already paid for loaded from the raw landing (no call)`);
  if (r.lost) c.note(`${r.lost} live task(s) were charged but their answer never arrived; recorded as failed, not bought again`);
  if (r.unloadable)
    c.note(`${r.unloadable} live task(s) were charged and landed but could not be loaded (${r.why}); recorded as failed, not bought again`);
  if (r.rereadPlain.length > 0) c.note(rereadNote(r.rereadPlain));
}

function isLive(id: string): boolean {
  try {
    return endpoint(id).mode === 'live';
  } catch {
    return false;
  }
}
