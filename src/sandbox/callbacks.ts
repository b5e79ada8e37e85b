import { performance } from 'node:perf_hooks';
import { deflateSync, gzipSync } from 'node:zlib';
import { request } from 'undici';
import { endpointPath, WINDOWS } from './spec/index.js';
import { makeEnvelope } from './envelope.js';
import { taskGetters } from './handlers/tasks-ready.js';
import { doneTaskObject, resultAtOf } from './task-result.js';
import type { StoredTask } from './task-store.js';
import type { SandboxWorld } from './world.js';

/** The service waits this long for a callback answer (spec/limits.ts), before the time scale. */
export const CALLBACK_TIMEOUT_MS = WINDOWS.callbackAnswerMs;
/** The task status code the errors endpoint records for a failed callback (spec: 50000 example). */
const CALLBACK_ERROR_CODE = 50000;
const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost)$/;

/** A postback's request body as sent, and what it was built from (a re-parse, another format or encoding builds it again). */
interface BuiltBody {
  key: string;
  body: Buffer;
  headers: Record<string, string>;
}

/**
 * `$id` and `$tag` of a callback URL replaced by the task's id and tag, the tag
 * URL-encoded (a tag may hold `&` or spaces).
 */
export function substituteCallbackUrl(url: string, id: string, tag: string | null): string {
  return url.replaceAll('$id', encodeURIComponent(id)).replaceAll('$tag', encodeURIComponent(tag ?? ''));
}

/**
 * Sends pingbacks (GET) and gzip postbacks (POST of the `task_get` envelope of the
 * format named by `postback_data`; compressed as the `postbackEncoding` reading says) for done tasks. An answer outside 200-300, or none
 * within 10 seconds divided by the time scale, fails the callback: the task joins the
 * ready list and an `errors` row names the URL. Only loopback URLs are called unless
 * the emulator was told otherwise, so tests never reach the outside network.
 */
export class CallbackDispatcher {
  readonly #world: SandboxWorld;
  readonly #inflight = new Set<Promise<void>>();
  #last: Promise<void> = Promise.resolve();
  /** Callbacks under way (from the start of building the body to the answer), and those waiting for a place. */
  #active = 0;
  readonly #waiting: Array<() => void> = [];
  /** Postback bodies built and not sent yet: a body is built once per sending (a failed one is built again at its resend). */
  readonly #bodies = new Map<StoredTask, BuiltBody>();
  /** Done tasks whose callbacks wait out `callbackDelayMs`. */
  readonly #held = new Set<StoredTask>();

  constructor(world: SandboxWorld) {
    this.#world = world;
  }

  /**
   * Starts the callbacks of every task that is done by now; with `callbackDelayMs`, holds
   * them that long, building each postback body meanwhile.
   */
  tick(): void {
    const now = this.#world.now().getTime();
    const delay = this.#world.callbackDelayMs;
    for (const task of this.#world.store.dueCallbacks(now)) {
      if (delay > 0) this.#hold(task);
      else this.send(task);
    }
    for (const task of this.#held) {
      if (task.readyAtMs + delay > now) continue;
      this.#held.delete(task);
      if (task.callbackState === 'pending') this.send(task);
    }
  }

  /** A done task's callback waits; its postback body is built in the background, one body a turn, as at sending. */
  #hold(task: StoredTask): void {
    this.#held.add(task);
    if (task.callbackSpec?.kind !== 'postback') return;
    void this.#turn().then(() => {
      try {
        if (this.#held.has(task)) this.#bodyOf(task, true);
      } catch {
        // Built again at sending, where a failure is the callback's.
      }
    });
  }

  /** Sends a task's callback now (again, for `webhook_resend`). */
  send(task: StoredTask): void {
    if (!task.callbackSpec || task.callbackState === 'sending') return;
    task.callbackState = 'sending';
    const p = this.#turn()
      .then(() => this.#place())
      .then(() => this.#deliver(task).finally(() => this.#leave()))
      .finally(() => {
        this.#bodies.delete(task);
        this.#inflight.delete(p);
      });
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
        const built = this.#bodyOf(task, false);
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

  /**
   * The postback body of a done task (the `task_get` envelope of the format named by
   * `postback_data`, compressed as the `postbackEncoding` reading says): the one built ahead
   * when it still holds, else built now.
   */
  #bodyOf(task: StoredTask, ahead: boolean): BuiltBody {
    const world = this.#world;
    const nowMs = world.now().getTime();
    const encoding = world.readings.postbackEncoding;
    const key = `${task.callbackSpec!.format}|${encoding}|${resultAtOf(task, nowMs)}`;
    const kept = this.#bodies.get(task);
    if (kept?.key === key) return kept;
    const getters = taskGetters(task.base);
    const getter = getters.get(task.callbackSpec!.format) ?? getters.get(undefined) ?? [...getters.values()][0];
    const segments = getter ? endpointPath(getter, task.id).split('/').filter(Boolean) : [];
    const envelope = makeEnvelope({
      tasks: [doneTaskObject(world.seed, task, getter?.format, segments, nowMs, world.account, world.readings)],
      costMicros: 0,
      elapsedMs: 0,
    });
    const json = JSON.stringify(envelope);
    // readings.ts `postbackEncoding`: gzip with its header (default), the same bytes without it, or deflate.
    const built = {
      key,
      body: encoding === 'deflate' ? deflateSync(json) : gzipSync(json),
      headers: {
        'content-type': 'application/json',
        ...(encoding === 'gzip-bare' ? {} : { 'content-encoding': encoding === 'deflate' ? 'deflate' : 'gzip' }),
      },
    };
    this.#bodies.set(task, built);
    world.stats.postbackBody(ahead);
    return built;
  }
}

function isLoopback(url: string): boolean {
  try {
    return LOOPBACK_HOST.test(new URL(url).hostname) || new URL(url).hostname === '[::1]';
  } catch {
    return false;
  }
}
