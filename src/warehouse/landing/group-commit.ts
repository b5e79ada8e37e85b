/** When a group commits, beyond "as soon as the last one is done". */
export interface GroupCommitOptions<T> {
  /** Items not ready yet wait for a later group (a callback whose task row is not committed yet). */
  ready?: (item: T) => boolean;
  /** With fewer than `minBatch` ready items, wait this long for more (0: commit at once; `flush` and `idle` never wait). */
  lingerMs?: number;
  minBatch?: number;
  /** At most this many items a group. */
  maxBatch?: number;
}

/**
 * Group commit: items that arrive while a group is being committed form the next group, so
 * a commit (an fsync, a transaction) is paid per group rather than per item and only one
 * group is in flight on a connection. The raw landing, the callback landing and the task
 * loader all batch through this one loop. `commit` settles its own items (each resolves or
 * rejects its caller); a throw from it is caught so the loop goes on.
 */
export class GroupCommit<T> {
  #items: T[] = [];
  #running: Promise<void> | null = null;
  #linger: NodeJS.Timeout | undefined;
  #flushing = false;

  constructor(
    private readonly commit: (group: T[]) => Promise<void>,
    private readonly o: GroupCommitOptions<T> = {},
  ) {}

  /** Adds an item; it is committed with the next group its rule allows. */
  push(item: T): void {
    this.#items.push(item);
    this.kick();
  }

  /** Starts a group if one may start now (something became ready, say). */
  kick(): void {
    if (this.#running) return;
    const ready = this.#readyCount();
    if (ready === 0) return;
    const linger = this.o.lingerMs ?? 0;
    if (!this.#flushing && linger > 0 && ready < (this.o.minBatch ?? 1)) {
      this.#linger ??= setTimeout(() => {
        this.#linger = undefined;
        this.#start();
      }, linger);
      return;
    }
    this.#start();
  }

  /** Commits what is ready now, without lingering for more. */
  flush(): void {
    this.#start();
  }

  /** Commits every ready item at once and waits until no group is in flight. */
  async idle(): Promise<void> {
    this.#flushing = true;
    try {
      this.#start();
      while (this.#running) await this.#running;
    } finally {
      this.#flushing = false;
    }
  }

  /** Items still waiting (not ready, or in the group being committed's queue). */
  get waiting(): number {
    return this.#items.length;
  }

  #readyCount(): number {
    const ready = this.o.ready;
    return ready ? this.#items.reduce((n, i) => n + (ready(i) ? 1 : 0), 0) : this.#items.length;
  }

  #start(): void {
    clearTimeout(this.#linger);
    this.#linger = undefined;
    if (this.#running || this.#readyCount() === 0) return;
    const max = this.o.maxBatch ?? Infinity;
    const group: T[] = [];
    const rest: T[] = [];
    for (const i of this.#items) (group.length < max && (this.o.ready?.(i) ?? true) ? group : rest).push(i);
    this.#items = rest;
    this.#running = this.commit(group)
      .catch(() => {})
      .finally(() => {
        this.#running = null;
        this.kick();
      });
  }
}
