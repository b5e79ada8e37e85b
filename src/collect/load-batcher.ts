import { relative } from 'node:path';
import {
  checkpointIfHeld,
  collectGarbage,
  compactRaw,
  GroupCommit,
  heldRowsBound,
  RunStore,
  type DamagedRawFile,
  type Warehouse,
} from '../warehouse/index.js';
import { InFlight } from './in-flight.js';
import { indexCallbacks } from './index-callbacks.js';
import type { LandedCallback } from './land-callback.js';
import { loadTasks } from './load-landed-tasks.js';

/** What the loader has done so far. */
export interface LoaderTotals {
  collected: number;
  failed: number;
  rowsLoaded: number;
  tables: Set<string>;
  /** Loads that failed: their tasks stay posted and are pulled instead. */
  errors: string[];
  /** Landed files DuckDB read short as gzip, loaded again from plain text. */
  rereadPlain: string[];
  /** Checkpoints made between loads (held-rows.ts). */
  checkpoints: number;
  /** Segments the loaded callbacks were compacted into while the night went on (`compactEvery`). */
  segments: number;
  /** Landed callback files found damaged by those compactions, kept apart; their tasks are to be fetched again. */
  damaged: DamagedRawFile[];
  /** Compactions that failed: their files stay as landed, for the run's end. */
  compactErrors: string[];
}

type Item =
  | { kind: 'landed'; c: LandedCallback }
  | { kind: 'fetched'; taskId: string }
  | { kind: 'failed'; taskId: string; statusCode: number; message: string };

/** Most tasks taken into one load; while one load runs, the next batch gathers. */
const BATCH = 1000;

/**
 * A load has a fixed cost whatever its size (binding the SERP types, planning, the commit):
 * 1 task or 500 cost nearly the same (docs/performance.md). So a load
 * starts once this many tasks wait, or when the oldest has waited {@link LINGER_MS}, or
 * when the collector flushes ({@link TaskLoader.idle}); not at each task's arrival.
 */
const MIN_BATCH = 500;
const LINGER_MS = 3000;

/**
 * Loaded callbacks between two compactions of their files while the night goes on: at an
 * agency's size the night's end otherwise joins some 100,000 small files at once, after the
 * last postback, while the two cores sat half idle during the rate-limited posting.
 */
const COMPACT_EVERY = 2000;

export interface TaskLoaderOptions {
  /** The collection's registry of tasks in flight, where the loader moves what it is handed and loads; a new one by default. */
  inFlight?: InFlight;
  /** Tasks that start a load at once (default 500); fewer wait up to `lingerMs` for company. */
  minBatch?: number;
  /** Longest a task waits for a load to start (default 3 s); 0 loads each arrival at once. */
  lingerMs?: number;
  /**
   * Bytes of rows committed since the last checkpoint DuckDB may hold before a load's end
   * checkpoints them (default `PIPELINE_CHECKPOINT_MB`, held-rows.ts; 0: never).
   */
  checkpointBytes?: number;
  /**
   * Loaded callbacks after which their landed files are joined into segments (compactRaw with
   * those files) before the next load (default 2,000; 0: never, the run's end compacts them).
   */
  compactEvery?: number;
}

/**
 * Loads landed task bodies in the background, one batch at a time, on its own database
 * connection, so the run keeps posting and fetching on the main one meanwhile: callbacks
 * the server landed, and tasks pull fetched (the client landed and indexed those). A task
 * waits until its row in the tasks table is committed, so its collected mark always finds
 * it. Each batch indexes its callbacks, then loads the rows and marks
 * the tasks collected in one transaction. A load's cost is mostly fixed, so a batch
 * gathers until {@link MIN_BATCH} tasks wait or the oldest has waited {@link LINGER_MS}
 * (their bodies are landed meanwhile: a crash loses nothing), and batches grow while a
 * load runs. {@link idle} loads what waits at once. A failed load leaves its
 * tasks posted, for pull (or the next run) to fetch again.
 */
export class TaskLoader {
  readonly totals: LoaderTotals = {
    collected: 0,
    failed: 0,
    rowsLoaded: 0,
    tables: new Set(),
    errors: [],
    rereadPlain: [],
    checkpoints: 0,
    segments: 0,
    damaged: [],
    compactErrors: [],
  };
  /** Where each task handed over is: `landed` until its load commits, then `collected` or `failed`, or `load_failed`. */
  readonly inFlight: InFlight;
  readonly #wh: Warehouse;
  readonly #runId: string;
  readonly #now: () => Date;
  readonly #batches: GroupCommit<Item>;
  readonly #checkpointBytes: number;
  readonly #compactEvery: number;
  /** Files of loaded callbacks not compacted yet, with how many of their callbacks are loaded. */
  #loadedFiles = new Map<string, { loaded: number; peers: number }>();
  #loadedCallbacks = 0;
  #listeners: Array<() => void> = [];

  constructor(wh: Warehouse, runId: string, now: () => Date, opts: TaskLoaderOptions = {}) {
    this.inFlight = opts.inFlight ?? new InFlight();
    this.#wh = wh;
    this.#runId = runId;
    this.#now = now;
    this.#checkpointBytes = opts.checkpointBytes ?? heldRowsBound();
    this.#compactEvery = opts.compactEvery ?? COMPACT_EVERY;
    this.#batches = new GroupCommit(
      async (batch) => {
        await this.#load(batch);
        // Before the news: whoever waits for the load may close the warehouse once it hears.
        await this.#checkpoint();
        await this.#compact();
        this.#notify();
      },
      { ready: (i) => this.#ready(i), lingerMs: opts.lingerMs ?? LINGER_MS, minBatch: opts.minBatch ?? MIN_BATCH, maxBatch: BATCH },
    );
  }

  /** A postback landed by the server. */
  landed(c: LandedCallback): void {
    this.#push({ kind: 'landed', c });
  }

  /** A task the client fetched (so its body is landed and indexed): pulled, or after a pingback. */
  fetched(taskId: string): void {
    this.#push({ kind: 'fetched', taskId });
  }

  /** A task the service answered with an error status. */
  failed(taskId: string, statusCode: number, message: string): void {
    this.#push({ kind: 'failed', taskId, statusCode, message });
  }

  /**
   * Tasks whose rows are committed now: their waiting items can be loaded, once enough
   * wait or the oldest has waited long enough.
   */
  kick(): void {
    this.#batches.kick();
  }

  /** Resolves the next time something is loaded or settled (or after `ms`). */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(t);
        self.#listeners = self.#listeners.filter((l) => l !== done);
        resolve();
      }
      this.#listeners.push(done);
    });
  }

  /** Loads at once every item whose task row exists (without lingering), and waits until they are loaded. */
  async idle(): Promise<void> {
    await this.#batches.idle();
  }

  /** Starts loading what waits now, without waiting for more to come (the collector has nothing more coming). */
  flush(): void {
    this.#batches.flush();
  }

  /** Items still waiting (their tasks' rows not committed, or a load under way). */
  get waiting(): number {
    return this.#batches.waiting;
  }

  #push(item: Item): void {
    const id = item.kind === 'landed' ? item.c.taskId : item.taskId;
    // A body that comes after the task is settled (two postbacks racing) is still indexed and
    // re-loaded (a legal re-load), without moving the task back.
    if (!this.inFlight.isSettled(id)) this.inFlight.move(id, 'landed');
    this.#batches.push(item);
    this.#notify();
  }

  /** A task's items wait until its row in the tasks table is committed, so its collected mark finds it. */
  #ready(i: Item): boolean {
    const id = i.kind === 'landed' ? i.c.taskId : i.taskId;
    return this.inFlight.get(id)?.recorded ?? true;
  }

  async #load(batch: Item[]): Promise<void> {
    const callbacks = batch.flatMap((i) => (i.kind === 'landed' ? [i.c] : []));
    const loadable = new Set(batch.flatMap((i) => (i.kind === 'fetched' ? [i.taskId] : i.kind === 'landed' && i.c.ok ? [i.c.taskId] : [])));
    const toLoad = [...loadable];
    // A task with a good body in the batch is loaded, whatever else came for it.
    const failed = batch
      .flatMap((i) =>
        i.kind === 'failed'
          ? [{ taskId: i.taskId, statusCode: i.statusCode, message: i.message }]
          : i.kind === 'landed' && !i.c.ok
            ? [{ taskId: i.c.taskId, statusCode: i.c.statusCode, message: i.c.message }]
            : [],
      )
      .filter((f) => !loadable.has(f.taskId));
    try {
      await indexCallbacks(this.#wh, this.#runId, callbacks);
      const load = await loadTasks(this.#wh, this.#runId, toLoad, this.#now());
      for (const c of callbacks) {
        const f = this.#loadedFiles.get(c.file) ?? { loaded: 0, peers: c.filePeers };
        this.#loadedFiles.set(c.file, { ...f, loaded: f.loaded + 1 });
      }
      this.#loadedCallbacks += callbacks.length;
      await new RunStore(this.#wh, this.#runId).markFailed(failed);
      this.totals.collected += load.collected;
      this.totals.rowsLoaded += load.rowsLoaded;
      for (const t of load.tables) this.totals.tables.add(t);
      this.totals.rereadPlain.push(...load.rereadPlain);
      this.totals.failed += failed.length;
      // A task whose answer the load did not find is left posted, for pull to fetch again.
      const unloaded = new Set(load.unloaded);
      if (unloaded.size > 0)
        this.totals.errors.push(`${unloaded.size} fetched tasks had no landed answer in the raw index; they are fetched again`);
      for (const id of toLoad) this.#settle(id, unloaded.has(id) ? 'load_failed' : 'collected');
      for (const f of failed) this.#settle(f.taskId, 'failed');
    } catch (err) {
      this.totals.errors.push((err as Error).message.split('\n')[0]!);
      for (const id of [...toLoad, ...failed.map((f) => f.taskId)]) this.#settle(id, 'load_failed');
    }
  }

  /**
   * A large night's loaded rows are checkpointed as it goes, once DuckDB holds more of them
   * than the bound, rather than all held in memory until the run's checkpoint step. The load
   * is committed already: a checkpoint that fails costs nothing (the next one, or the run's
   * own, writes the rows).
   */
  async #checkpoint(): Promise<void> {
    if (this.#checkpointBytes <= 0) return;
    try {
      if (await checkpointIfHeld(this.#wh, this.#checkpointBytes)) this.totals.checkpoints++;
    } catch {
      /* the rows stay in the write-ahead log and in memory until the next checkpoint */
    }
  }

  /**
   * Joins the files of the callbacks loaded so far into segments, once {@link COMPACT_EVERY}
   * have been loaded since the last time: each file whose callbacks are all loaded. Between loads, on the loader's connection, so no load
   * reads a file while it moves; only callback files, which nothing but a load reads during
   * the run (a paid answer is found again by its request, and callbacks carry none). The
   * segment is durable and indexed before the small files go (compactRaw), so a crash here
   * loses nothing. A failure leaves the files to the run's end.
   */
  async #compact(): Promise<void> {
    if (this.#compactEvery <= 0 || this.#loadedCallbacks < this.#compactEvery) return;
    // A file whose every callback is loaded (so indexed): one that shares it, still to come in a
    // later batch, is indexed by the file's name, which must still be there.
    const whole = [...this.#loadedFiles].filter(([, f]) => f.loaded >= f.peers).map(([file]) => file);
    for (const f of whole) this.#loadedFiles.delete(f);
    this.#loadedCallbacks = 0;
    const files = whole.map((f) => relative(this.#wh.dir, f));
    try {
      const done = await compactRaw(this.#wh, { at: this.#now(), files, runId: this.#runId });
      this.totals.segments += done.segments;
      this.totals.damaged.push(...done.damaged);
      // And the heap's garbage with it: the bodies, envelopes and rows of the postbacks loaded
      // since, which V8 would otherwise let grow to several times what the night holds live
      // before it collects (docs/performance.md: the agency night's peak RSS).
      collectGarbage();
    } catch (err) {
      // The files stay as landed; the run's end compacts them.
      this.totals.compactErrors.push((err as Error).message.split('\n')[0]!);
    }
  }

  #settle(id: string, to: 'collected' | 'failed' | 'load_failed'): void {
    // Already settled by an earlier batch: this was a re-load of a late duplicate.
    if (this.inFlight.get(id)?.state === 'landed') this.inFlight.move(id, to);
  }

  #notify(): void {
    for (const l of [...this.#listeners]) l();
  }
}
