import type { RankProfiles } from './rank-walk.js';

/** Where a task's result goes when it is done. */
export interface TaskCallback {
  kind: 'pingback' | 'postback';
  /** The URL as posted, with `$id` and `$tag` still in it. */
  url: string;
  /** `postback_data`: the `task_get` format the postback carries. */
  format: 'regular' | 'advanced' | 'html';
}

/** A task the emulator accepted, with its place in the lifecycle. */
export interface StoredTask {
  id: string;
  /** Key that posted it: the ready list and `task_get` answer only that key. */
  key: string;
  /** `{api}` of the spec (`serp`, `keywords_data`, …), for `errors`, `id_list`, `webhook_resend`. */
  api: string;
  /** The function that created it: `task_post` or `live`. */
  fn: string;
  /** Catalog id of the creating endpoint. */
  endpointId: string;
  /** The API path the task was created with (`id_list` `url`). */
  postPath: string;
  /** The function's path without the lifecycle suffix (function-base.ts): ready list and task_get match on it. */
  base: string;
  engine: string;
  type: string;
  postedAtMs: number;
  /** When the task is done, on the emulator clock (live tasks: at once). */
  readyAtMs: number;
  /** The task as posted (what the generator reads). */
  params: Record<string, unknown>;
  /** The emulator's drift share when the task was posted (serp-drift.ts); 0 when absent. */
  drift?: number;
  /** The emulator's rank profiles when the task was posted (rank-walk.ts); absent when none. */
  rankProfiles?: RankProfiles;
  /** `data` of the envelope: the echo plus api, function, se, se_type, device, os. */
  data: Record<string, unknown>;
  tag: string | null;
  /** Posted with pingback_url or postback_url: delivered by callback, not listed as ready unless the callback failed. */
  callback: boolean;
  /** The callback, when one was posted. */
  callbackSpec?: TaskCallback;
  /** `pending` until done; then `delivered`, or `failed` (the task joins the ready list). */
  callbackState?: 'pending' | 'sending' | 'delivered' | 'failed';
  /** Whether the creating endpoint supports callbacks at all (`webhook_resend` 40503 otherwise). */
  callbacksSupported: boolean;
  /** Set when the fault profile re-parses the task: when it shows up in `tasks_fixed`. */
  fixedAtMs?: number;
  /** CNY units the task is priced at when created (charged or not: sandbox keys pay nothing). */
  priceUnits: number;
  /** CNY units still charged for it: the price less any refund (0 for sandbox keys). */
  chargedUnits: number;
  /** Raw USD cost when created: the POST's `cost`, and `id_list`'s. */
  costMicros: number;
  /** Raw USD cost after the refund of unused depth (depth-refund.ts); the task's `cost` once done. Absent: no refund. */
  netCostMicros?: number;
  /** Set when the task was completed (result built, unused depth refunded): once per task. */
  completed?: boolean;
  collected: boolean;
  /** When `task_get` last answered it with its result, on the emulator clock. */
  collectedAtMs?: number;
  /**
   * Built when first needed (completion, a fetch, a postback); held for the RESULTS_KEPT tasks
   * built or moved on last, else rebuilt from the seed, the same, so every `task_get` answers alike.
   */
  result?: unknown;
  /** The day `result` was built for (a re-parse rebuilds it once). */
  resultAtMs?: number;
  /** `result` serialized per format, made on first fetch (raw-json.ts). */
  resultText?: Map<string, string>;
}

/** Ready tasks older than this are no longer listed (result-shapes.md: last 3 days). */
const READY_LIST_WINDOW_MS = 3 * 24 * 3600 * 1000;
/**
 * A re-parsed task is listed by `tasks_fixed` from the re-parse until it is collected (again),
 * for at most 24 hours (spec, States: "stays until collected"). A result fetched before the
 * re-parse does not count: the fixed result is what the list is there to have collected.
 */
const FIXED_WINDOW_MS = 24 * 3600 * 1000;
/**
 * How many tasks hold their built result at once. A result is a pure function of the seed and
 * the task as posted (data/results.ts), so one let go is rebuilt, the same, when it is fetched
 * again (as a restored emulator does, state-journal.ts); the store keeps the parameters of every
 * task, never every result, so a season of nights runs in bounded memory.
 */
export const RESULTS_KEPT = 1_000;

/**
 * In-memory task lifecycle: created → ready (at `readyAtMs` on the injected clock) →
 * collected. Time is read from the caller's clock, never from the system, so tests move
 * tasks through their states without sleeping.
 */
export class TaskStore {
  readonly #tasks = new Map<string, StoredTask>();
  /** Tasks whose callback has not been attempted: scanned on every call, so kept apart. */
  readonly #pending = new Set<StoredTask>();
  /** Tasks that may be refunded when done, not completed yet: checked on every call (depth-refund.ts). */
  readonly #completing = new Set<StoredTask>();
  /** Tasks added or changed since the last `takeChanged`: what a persisted emulator writes down (state-journal.ts). */
  readonly #changed = new Set<StoredTask>();
  /** Only a persisted emulator keeps the changed set. */
  readonly #tracked: boolean;
  /** Tasks holding a built result, the least recently built or moved on first (RESULTS_KEPT). */
  readonly #withResult = new Set<StoredTask>();
  readonly #resultsKept: number;

  constructor(opts: { tracked?: boolean; resultsKept?: number } = {}) {
    this.#tracked = opts.tracked ?? false;
    this.#resultsKept = opts.resultsKept ?? RESULTS_KEPT;
  }

  /** Adds a task; `refundable` puts it in the completion queue, so its refund lands when it is done. */
  add(task: StoredTask, refundable = false): void {
    this.#tasks.set(task.id, task);
    if (this.#tracked) this.#changed.add(task);
    if (task.callbackState === 'pending') this.#pending.add(task);
    if (refundable && !task.completed) this.#completing.add(task);
    this.#keepResult(task);
  }

  /** Says a task moved on (collected, completed, its callback sent): a persisted emulator writes it down before answering. */
  touch(task: StoredTask): void {
    if (this.#tracked) this.#changed.add(task);
    this.#keepResult(task);
  }

  /** How many tasks hold a built result now (at most RESULTS_KEPT). */
  get resultsHeld(): number {
    return this.#withResult.size;
  }

  /** Counts a task's built result among those kept; past the bound the oldest are let go, to be rebuilt when fetched. */
  #keepResult(task: StoredTask): void {
    if (task.result === undefined) return;
    this.#withResult.delete(task);
    this.#withResult.add(task);
    for (const old of this.#withResult) {
      if (this.#withResult.size <= this.#resultsKept) break;
      this.#withResult.delete(old);
      delete old.result;
      delete old.resultAtMs;
      delete old.resultText;
    }
  }

  /** Gives the tasks held under key `from` (a restored task's key hash) to `to`. */
  rekey(from: string, to: string): void {
    for (const t of this.#tasks.values()) if (t.key === from) t.key = to;
  }

  /** The tasks added or touched since the last call, and forgets them. */
  takeChanged(): StoredTask[] {
    const out = [...this.#changed];
    this.#changed.clear();
    return out;
  }

  /** Queued tasks that are done by `nowMs` and not completed yet; they leave the queue. */
  dueCompletions(nowMs: number): StoredTask[] {
    const out: StoredTask[] = [];
    for (const t of this.#completing) {
      if (t.completed) this.#completing.delete(t);
      else if (t.readyAtMs <= nowMs) {
        this.#completing.delete(t);
        out.push(t);
      }
    }
    return out;
  }

  /** The task with this id if `key` posted it; other keys' tasks do not exist for them. */
  get(id: string, key: string): StoredTask | undefined {
    const t = this.#tasks.get(id);
    return t && t.key === key ? t : undefined;
  }

  /** Every task, oldest first (insertion order). */
  all(): IterableIterator<StoredTask> {
    return this.#tasks.values();
  }

  /**
   * Ready, uncollected tasks of one function for one key, oldest first, at most
   * `limit`. Callback tasks are left out unless their callback failed.
   */
  ready(key: string, base: string, nowMs: number, limit: number): StoredTask[] {
    const out: StoredTask[] = [];
    for (const t of this.#tasks.values()) {
      if (t.key !== key || t.base !== base || t.fn !== 'task_post') continue;
      if (t.collected || (t.callback && t.callbackState !== 'failed')) continue;
      if (t.readyAtMs > nowMs || nowMs - t.readyAtMs > READY_LIST_WINDOW_MS) continue;
      out.push(t);
    }
    return out.sort((a, b) => a.readyAtMs - b.readyAtMs).slice(0, limit);
  }

  /** Re-parsed tasks of one function, fixed within the last 24 hours and not collected since. */
  fixed(key: string, base: string, nowMs: number, limit: number): StoredTask[] {
    const out: StoredTask[] = [];
    for (const t of this.#tasks.values()) {
      if (t.key !== key || t.base !== base || t.fixedAtMs === undefined) continue;
      if (t.fixedAtMs > nowMs || nowMs - t.fixedAtMs > FIXED_WINDOW_MS) continue;
      if (t.collectedAtMs !== undefined && t.collectedAtMs >= t.fixedAtMs) continue;
      out.push(t);
    }
    return out.sort((a, b) => (a.fixedAtMs ?? 0) - (b.fixedAtMs ?? 0)).slice(0, limit);
  }

  /** Callback tasks that are done and whose callback has not been attempted yet. */
  dueCallbacks(nowMs: number): StoredTask[] {
    const out: StoredTask[] = [];
    for (const t of this.#pending) {
      if (t.callbackState !== 'pending') this.#pending.delete(t);
      else if (t.readyAtMs <= nowMs) {
        this.#pending.delete(t);
        out.push(t);
      }
    }
    return out;
  }
}
