import type { Endpoint } from '../catalog/index.js';

/** A task this process posted with a callback URL. */
export interface PostedTask {
  taskId: string;
  tag: string;
  /** The `task_get` endpoint of its function: where a postback's body would have come from. */
  get: Endpoint;
  /** True once its id is committed to the tasks table, so its collected mark can be written. */
  recorded: boolean;
  /** Loaded (or failed) already: a repeated callback is acknowledged without landing it again. */
  settled: boolean;
}

/**
 * The tasks this process posted, as the callback server needs them: which ids it may
 * accept, and whether their rows in the tasks table exist yet. A callback can come before
 * the POST's answer is recorded (a fast task), so tags of POSTs in flight are known too,
 * and a callback naming one waits briefly for its id.
 */
export class PostedTasks {
  readonly #byId = new Map<string, PostedTask>();
  readonly #sending = new Map<string, Endpoint>();
  #waiters: Array<() => void> = [];
  #onRecorded: (ids: readonly string[]) => void = () => {};

  /** Called with the ids whose task rows now exist (the loader may mark them). */
  set onRecorded(fn: (ids: readonly string[]) => void) {
    this.#onRecorded = fn;
  }

  /** Tags of a POST about to be sent (with `get`, the task_get endpoint of their function). */
  sending(tags: readonly string[], get: Endpoint): void {
    for (const t of tags) this.#sending.set(t, get);
  }

  /** The POST answered: these tags have ids now. Tags without a row here were not created. */
  answered(tags: readonly string[], rows: readonly { tag: string; taskId: string | null }[]): void {
    for (const r of rows) {
      const get = this.#sending.get(r.tag);
      if (get && r.taskId) this.#byId.set(r.taskId, { taskId: r.taskId, tag: r.tag, get, recorded: false, settled: false });
    }
    for (const t of tags) this.#sending.delete(t);
    this.#wake();
  }

  /** The POST failed without an answer: none of its tags will get an id from it. */
  abandoned(tags: readonly string[]): void {
    for (const t of tags) this.#sending.delete(t);
    this.#wake();
  }

  /** The ids' rows are committed in the tasks table. */
  recorded(ids: readonly string[]): void {
    const done: string[] = [];
    for (const id of ids) {
      const t = this.#byId.get(id);
      if (t && !t.recorded) {
        t.recorded = true;
        done.push(id);
      }
    }
    if (done.length > 0) this.#onRecorded(done);
  }

  get(taskId: string): PostedTask | undefined {
    return this.#byId.get(taskId);
  }

  /** Ids of every task posted (and recorded) by this process. */
  recordedIds(): string[] {
    return [...this.#byId.values()].filter((t) => t.recorded).map((t) => t.taskId);
  }

  get size(): number {
    return this.#byId.size;
  }

  /**
   * The task with this id, if this process posted it. When the id is unknown but `tag`
   * belongs to a POST still in flight, waits up to `waitMs` for that POST's answer.
   */
  async find(taskId: string, tag: string | null, waitMs: number): Promise<PostedTask | undefined> {
    const until = Date.now() + waitMs;
    for (;;) {
      const t = this.#byId.get(taskId);
      if (t || tag === null || !this.#sending.has(tag) || Date.now() >= until) return t;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, until - Date.now()));
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}
