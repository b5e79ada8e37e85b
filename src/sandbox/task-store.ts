import type { SerpAdvancedResult } from './serp-types.js';

/** A task the emulator accepted, with its place in the lifecycle. */
export interface StoredTask {
  id: string;
  /** Key that posted it: the ready list and `task_get` answer only that key. */
  key: string;
  engine: string;
  type: string;
  postedAtMs: number;
  readyAtMs: number;
  /** The task as posted (what the generator reads). */
  params: Record<string, unknown>;
  /** `data` of the envelope: the echo plus api, function, se, se_type, device, os. */
  data: Record<string, unknown>;
  tag: string | null;
  /** Posted with pingback_url or postback_url: delivered by callback, not listed as ready. */
  callback: boolean;
  chargedUnits: number;
  costMicros: number;
  collected: boolean;
  /** Built on first collection and kept, so every later `task_get` answers the same. */
  result?: SerpAdvancedResult;
}

/** Ready tasks older than this are no longer listed (result-shapes.md: last 3 days). */
const READY_LIST_WINDOW_MS = 3 * 24 * 3600 * 1000;

/**
 * In-memory task lifecycle: created → ready (at `readyAtMs` on the injected clock) →
 * collected. Time is read from the caller's clock, never from the system, so tests move
 * tasks through their states without sleeping.
 */
export class TaskStore {
  readonly #tasks = new Map<string, StoredTask>();

  add(task: StoredTask): void {
    this.#tasks.set(task.id, task);
  }

  /** The task with this id if `key` posted it; other keys' tasks do not exist for them. */
  get(id: string, key: string): StoredTask | undefined {
    const t = this.#tasks.get(id);
    return t && t.key === key ? t : undefined;
  }

  /**
   * Ready, uncollected tasks of one engine/type for one key, oldest first, at most
   * `limit`. Callback tasks are left out (their callbacks have not failed).
   */
  ready(key: string, engine: string, type: string, nowMs: number, limit: number): StoredTask[] {
    const out: StoredTask[] = [];
    for (const t of this.#tasks.values()) {
      if (t.key !== key || t.engine !== engine || t.type !== type) continue;
      if (t.collected || t.callback) continue;
      if (t.readyAtMs > nowMs || nowMs - t.readyAtMs > READY_LIST_WINDOW_MS) continue;
      out.push(t);
    }
    return out.sort((a, b) => a.readyAtMs - b.readyAtMs).slice(0, limit);
  }
}
