import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { WINDOWS } from './spec/index.js';
import { PostbackBodies } from './postback-body.js';
import type { StoredTask } from './task-store.js';
import type { SandboxWorld } from './world.js';

/** The service waits this long for a callback answer (spec/limits.ts), before the time scale. */
export const CALLBACK_TIMEOUT_MS = WINDOWS.callbackAnswerMs;
/** The task status code the errors endpoint records for a failed callback (spec: 50000 example). */
const CALLBACK_ERROR_CODE = 50000;
const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost)$/;

/**
 * `$id` and `$tag` of a callback URL replaced by the task's id and tag, the tag
 * URL-encoded (a tag may hold `&` or spaces).
 */
export function substituteCallbackUrl(url: string, id: string, tag: string | null): string {
  return url.replaceAll('$id', encodeURIComponent(id)).replaceAll('$tag', encodeURIComponent(tag ?? ''));
}

/**
 * Sends pingbacks (GET) and gzip postbacks (POST of the `task_get` envelope of the
 * format named by `postback_data`; compressed as the `postbackEncoding` reading says;
 * postback-body.ts) for done tasks. An answer outside 200-300, or none
 * within 10 seconds divided by the time scale, fails the callback: the task joins the
 * ready list and an `errors` row names the URL. Only loopback URLs are called unless
 * the emulator was told otherwise, so tests never reach the outside network.
 */
export class CallbackDispatcher {
  readonly #world: SandboxWorld;
  /** Builds postback bodies (ahead of their send, with `prebuildPostbacks`). */
  readonly bodies: PostbackBodies;
  readonly #inflight = new Set<Promise<void>>();
  #last: Promise<void> = Promise.resolve();
  /** Callbacks under way (from the start of building the body to the answer), and those waiting for a place. */
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(world: SandboxWorld) {
    this.#world = world;
    this.bodies = new PostbackBodies(world);
  }

  /** A task was created: its postback body is built ahead when `prebuildPostbacks` is on. */
  created(task: StoredTask): void {
    this.bodies.prebuild(task);
  }

  /** Starts the callbacks of every task that is done by now. */
  tick(): void {
    for (const task of this.#world.store.dueCallbacks(this.#world.now().getTime())) this.send(task);
  }

  /** Sends a task's callback now (again, for `webhook_resend`). */
  send(task: StoredTask): void {
    if (!task.callbackSpec || task.callbackState === 'sending') return;
    task.callbackState = 'sending';
    const p = this.#turn()
      .then(() => this.#place())
      .then(() => this.#deliver(task).finally(() => this.#leave()))
      .finally(() => this.#inflight.delete(p));
    this.#inflight.add(p);
  }

  /**
   * Resolves one turn of the event loop after the previous callback's turn, so bodies are
   * built one per turn and API calls are served in between: built all at once, a hundred
   * results held every API answer up for most of a second, which a real service does not.
   */
  #turn(): Promise<void> {
    const next = this.#last.then(() => new Promise<void>((r) => setImmediate(r)));
    this.#last = next;
    return next;
  }

  /**
   * Waits for a place under `callbackConcurrency` (no bound when unset): with a bound, the
   * emulator sends as fast as the receiver answers and each callback's 10 seconds start
   * when it is sent, not while it waits its turn.
   */
  #place(): Promise<void> {
    const max = this.#world.callbackConcurrency;
    if (max === undefined || this.#active < max) {
      this.#active++;
      return Promise.resolve();
    }
    return new Promise<void>((r) => this.#waiting.push(r));
  }

  #leave(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#active--;
  }

  /** Starts due callbacks and waits until every callback under way has ended. */
  async flush(): Promise<void> {
    this.tick();
    while (this.#inflight.size > 0) await Promise.all([...this.#inflight]);
  }

  async #deliver(task: StoredTask): Promise<void> {
    const spec = task.callbackSpec!;
    const world = this.#world;
    const url = substituteCallbackUrl(spec.url, task.id, task.tag);
    const method = spec.kind === 'pingback' ? 'GET' : 'POST';
    const started = performance.now();
    let outcome: { httpCode: number; response: string; message?: string };
    if (world.faults.nextCallbackFails()) {
      world.stats.fault('callback_failure');
      outcome = { httpCode: 0, response: '', message: 'Connection timed out (simulated by the fault profile).' };
    } else if (!world.allowRemoteCallbacks && !isLoopback(url)) {
      outcome = { httpCode: 0, response: '', message: 'The emulator calls back only loopback addresses.' };
    } else {
      outcome = await this.#call(task, url, method);
    }
    const ok =
      outcome.message === undefined && outcome.httpCode >= WINDOWS.callbackOkStatus.min && outcome.httpCode <= WINDOWS.callbackOkStatus.max;
    world.stats.callback(ok);
    task.callbackState = ok ? 'delivered' : 'failed';
    world.store.touch(task);
    if (ok) {
      // A delivery the service repeats: the receiver must take the second one without loading twice.
      if (world.faults.nextCallbackDuplicated()) {
        world.stats.fault('callback_duplicate');
        await this.#call(task, url, method);
      }
      this.bodies.delivered(task);
      return;
    }
    world.errors.add(task.key, task.api, world.now(), {
      id: task.id,
      function: `${spec.kind}_url`,
      error_code: CALLBACK_ERROR_CODE,
      error_message: outcome.message ?? `The callback answered HTTP ${outcome.httpCode}.`,
      http_url: url,
      http_method: method,
      http_code: outcome.httpCode,
      http_time: Number(((performance.now() - started) / 1000).toFixed(4)),
      http_response: outcome.response.slice(0, 1000),
    });
  }

  async #call(task: StoredTask, url: string, method: 'GET' | 'POST'): Promise<{ httpCode: number; response: string; message?: string }> {
    const world = this.#world;
    const timeoutMs = Math.max(1, Math.ceil(CALLBACK_TIMEOUT_MS / world.timeScale)); // AbortSignal.timeout takes whole ms
    try {
      const init: Parameters<typeof request>[1] = {
        method,
        signal: AbortSignal.timeout(timeoutMs),
        ...(world.dispatcher ? { dispatcher: world.dispatcher } : {}),
      };
      if (method === 'POST') {
        const built = this.bodies.body(task);
        init.body = built.body;
        init.headers = built.headers;
      }
      const res = await request(url, init);
      const response = await res.body.text();
      return { httpCode: res.statusCode, response };
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      return {
        httpCode: 0,
        response: '',
        message: timedOut ? `No answer within ${CALLBACK_TIMEOUT_MS / 1000} seconds.` : `Connection failed: ${(err as Error).message}`,
      };
    }
  }
}

function isLoopback(url: string): boolean {
  try {
    return LOOPBACK_HOST.test(new URL(url).hostname) || new URL(url).hostname === '[::1]';
  } catch {
    return false;
  }
}
