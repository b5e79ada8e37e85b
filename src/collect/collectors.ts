import { endpoint, ON_PAGE_MAX_OFFSET, type Endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import { damagedNotes, type RunStore, type Warehouse } from '../warehouse/index.js';
import type { CollectCounts } from './collect-counts.js';
import { InFlight } from './in-flight.js';
import { rereadNote } from './load-landed-tasks.js';
import { collectOnPage, type CrawlCap, type OnPageRead } from './on-page.js';
import { collectByPull } from './pull.js';
import type { PushCollector } from './push-collect.js';
import { TaskLoader } from './load-batcher.js';

/** What a collection is given: the run's parts, its deadline, and where its events go. */
export interface CollectRun {
  client: ServiceClient;
  wh: Warehouse;
  store: RunStore;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  signal?: AbortSignal;
  pollIntervalMs: number;
  /** Epoch ms at which collection stops; what is still out stays posted for the next run. */
  deadlineAt: number;
  /**
   * The collection's one registry of tasks in flight, shared by every collector and loader of
   * the run: a task push handed to its loader is not fetched again by pull.
   */
  inFlight: InFlight;
  /** Progress, as the run's task counts and the calls still to make. */
  onProgress?: (p: CollectCounts) => void;
  /** A line for the run's notes (what a collector did). */
  onNote?: (text: string) => void;
}

/**
 * How a collector ended: the tasks it leaves for the next run (push leaves none: what it did
 * not get, pull takes next), and what comes next. `sweep`: the collectors after it fetch every
 * waiting task directly before polling (callbacks stopped coming, or their loads failed);
 * `stop`: collection ends here (the deadline passed, or the run was interrupted).
 */
export interface CollectorEnd {
  pending: number;
  then: 'next' | 'sweep' | 'stop';
}

/**
 * One way of collecting what a run posted. A run collects with push first (when it posted
 * with callbacks), then pull (which also takes what push left), then crawl watching: one
 * sequence, each collector given the same {@link CollectRun}.
 */
export interface Collector {
  readonly kind: 'push' | 'pull' | 'crawl';
  collect(run: CollectRun, opts: { sweep: boolean }): Promise<CollectorEnd>;
}

/** Push: waits for the callbacks of what this process posted, then stops its server. */
export function pushCollector(push: PushCollector): Collector {
  return {
    kind: 'push',
    async collect(run, { sweep }) {
      // A sweep fetches every waiting task directly: nothing to wait for.
      if (sweep) return { pending: 0, then: 'next' };
      const pushed = await push.collect({
        client: run.client,
        deadlineAt: run.deadlineAt,
        checkEveryMs: run.pollIntervalMs,
        ...(run.signal ? { signal: run.signal } : {}),
        onProgress: (p) => run.onProgress?.({ ...p, posted: p.collected + p.failed + p.pending, ready: 0, refetched: 0, callsLeft: [] }),
      });
      await push.close();
      if (pushed.rereadPlain.length > 0) run.onNote?.(rereadNote(pushed.rereadPlain));
      for (const n of damagedNotes(pushed.damaged)) run.onNote?.(n);
      if (pushed.compactErrors.length > 0)
        run.onNote?.(
          `${pushed.compactErrors.length} compaction(s) of landed postbacks during the night failed (first: ${pushed.compactErrors[0]}); their files were left to the compaction at the run's end`,
        );
      const refused = Object.entries(pushed.refused)
        .map(([code, n]) => `${n}x${code}`)
        .join(', ');
      run.onNote?.(
        `push: ${pushed.landed} postback(s) and ${pushed.pinged} pingback(s) taken, ${pushed.resent} resent, ${pushed.fetched} fetched${refused ? `, refused ${refused}` : ''}; ${pushed.pending} left (${pushed.ended})`,
      );
      if (pushed.ended === 'deadline' || pushed.ended === 'interrupted') return { pending: pushed.pending, then: 'stop' };
      // Callbacks that stopped coming, or bodies that would not load, are fetched directly.
      return { pending: 0, then: pushed.ended === 'stalled' || pushed.ended === 'load_failed' ? 'sweep' : 'next' };
    },
  };
}

/** Pull: polls the functions' ready lists and fetches what is ready; fetched tasks load on a second connection meanwhile. */
export function pullCollector(postEndpoints: readonly Endpoint[]): Collector {
  return {
    kind: 'pull',
    async collect(run, { sweep }) {
      const sibling = await run.wh.sibling();
      try {
        const pull = await collectByPull({
          client: run.client,
          wh: run.wh,
          store: run.store,
          postEndpoints,
          sweep,
          pollIntervalMs: run.pollIntervalMs,
          timeoutMs: Math.max(0, run.deadlineAt - run.now().getTime()),
          ...(run.signal ? { signal: run.signal } : {}),
          now: run.now,
          sleep: run.sleep,
          ...(run.onProgress ? { onProgress: run.onProgress } : {}),
          loader: new TaskLoader(sibling, run.store.runId, run.now, { inFlight: run.inFlight }),
        });
        if (pull.rereadPlain.length > 0) run.onNote?.(rereadNote(pull.rereadPlain));
        if (pull.refetchUnloaded.length > 0) run.onNote?.(refetchUnloadedNote(pull.refetchUnloaded));
        return { pending: pull.pending, then: 'next' };
      } finally {
        sibling.close();
      }
    },
  };
}

/** Crawl: watches the run's on-page crawls and reads each finished one. */
export function crawlCollector(readsOf: (job: string) => { read: readonly OnPageRead[]; maxItems: number; pageSize?: number }): Collector {
  return {
    kind: 'crawl',
    async collect(run) {
      const pages = await collectOnPage({
        client: run.client,
        wh: run.wh,
        store: run.store,
        readsOf,
        pollIntervalMs: run.pollIntervalMs,
        timeoutMs: Math.max(0, run.deadlineAt - run.now().getTime()),
        ...(run.signal ? { signal: run.signal } : {}),
        now: run.now,
        sleep: run.sleep,
        // A crawl is read with a handful of on-page calls once finished: counted as one call left per crawl.
        onProgress: (p) =>
          run.onProgress?.({
            ...p,
            posted: p.collected + p.failed + p.pending,
            ready: 0,
            refetched: 0,
            callsLeft: [{ family: endpoint('on_page.pages').family, calls: p.pending }],
          }),
      });
      for (const cap of pages.capped) run.onNote?.(crawlCapNote(cap));
      return { pending: pages.pending, then: 'next' };
    },
  };
}

/** The run's note for a kind of a crawl read only in part. */
export function crawlCapNote(c: CrawlCap): string {
  const of = c.total === undefined ? `${c.read} ${c.kind} (of more)` : `${c.read} of ${c.total} ${c.kind}`;
  const why =
    c.why === 'max_items'
      ? `the job's max_items (${c.maxItems}) was reached`
      : `the service's offset reaches no deeper than ${ON_PAGE_MAX_OFFSET} (search_after_token only 20000)`;
  return `on-page crawl ${c.crawl} (job ${c.job}): read ${of}; ${why}, the rest were not read`;
}

/**
 * Runs the collectors in order over one {@link CollectRun}: each gets the sweep flag the one
 * before it asked for, and a `stop` ends the sequence. Returns the tasks still out.
 */
export async function collectAll(
  collectors: readonly Collector[],
  run: CollectRun,
  opts: { sweep: boolean },
): Promise<{ pending: number; stopped: boolean }> {
  let sweep = opts.sweep;
  let pending = 0;
  for (const c of collectors) {
    const end = await c.collect(run, { sweep });
    if (end.then === 'stop') return { pending: end.pending, stopped: true };
    pending += end.pending;
    sweep = sweep || end.then === 'sweep';
  }
  return { pending, stopped: false };
}

/** The run's note for re-parsed tasks whose new answer could not be loaded. */
export function refetchUnloadedNote(unloaded: readonly { id: string; why: string }[]): string {
  return `${unloaded.length} re-parsed task(s) were fetched again but their new answer could not be loaded (${unloaded[0]!.why}); their old rows are kept, and the next run fetches them again (task_get is free)`;
}
