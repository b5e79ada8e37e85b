import { deflateSync, gzipSync } from 'node:zlib';
import type { SandboxAccount } from './account.js';
import { completeTask } from './depth-refund.js';
import { makeEnvelope } from './envelope.js';
import { taskGetters } from './handlers/tasks-ready.js';
import type { ServedReadings } from './readings.js';
import { endpointPath, type ResultFormat } from './spec/index.js';
import { doneTaskObject } from './task-result.js';
import type { StoredTask } from './task-store.js';
import type { SandboxWorld } from './world.js';

/** A postback as sent: the compressed `task_get` envelope and its headers. */
export interface PostbackBody {
  body: Buffer;
  headers: Record<string, string>;
}

/** A body built ahead of its send, and what it was built from (to tell whether it still holds). */
interface Prebuilt extends PostbackBody {
  resultAtMs: number | undefined;
  costMicros: number;
  format: ResultFormat | undefined;
  encoding: ServedReadings['postbackEncoding'];
}

/** A refund sink: a body built ahead must not move the balance before the task is done. */
const NO_ACCOUNT = { refund: () => {} } as unknown as SandboxAccount;

/** The `task_get` getter a postback's body follows: the format named by `postback_data`, else the plain getter. */
function getterOf(task: StoredTask) {
  const getters = taskGetters(task.base);
  return getters.get(task.callbackSpec!.format) ?? getters.get(undefined) ?? [...getters.values()][0];
}

/**
 * The postback body of a done task: the `task_get` envelope of the format named by
 * `postback_data`, compressed as the `postbackEncoding` reading says (gzip with its header by
 * default, the same bytes without it, or deflate).
 */
function buildBody(seed: number, task: StoredTask, nowMs: number, account: SandboxAccount, readings: ServedReadings): PostbackBody {
  const getter = getterOf(task);
  const segments = getter ? endpointPath(getter, task.id).split('/').filter(Boolean) : [];
  const envelope = makeEnvelope({
    tasks: [doneTaskObject(seed, task, getter?.format, segments, nowMs, account, readings)],
    costMicros: 0,
    elapsedMs: 0,
  });
  const json = JSON.stringify(envelope);
  const encoding = readings.postbackEncoding;
  return {
    body: encoding === 'deflate' ? deflateSync(json) : gzipSync(json),
    headers: {
      'content-type': 'application/json',
      ...(encoding === 'gzip-bare' ? {} : { 'content-encoding': encoding === 'deflate' ? 'deflate' : 'gzip' }),
    },
  };
}

/** The moment a task's result is built for at `nowMs` (task-result.ts doneTaskObject): its re-parse once that is due, else its ready time. */
function resultMoment(task: StoredTask, nowMs: number): number {
  return task.fixedAtMs !== undefined && task.fixedAtMs <= nowMs ? task.fixedAtMs : task.readyAtMs;
}

/**
 * Builds postback bodies. By default a body is built when it is sent. With
 * `prebuildPostbacks` on, a postback task's body is built and compressed after its POST, in
 * the emulator's idle turns (one a turn), as the service will send it when the task is done:
 * its result for the moment it is done, its net cost after the depth refund (the refund
 * itself still moves the balance only when the task is done). At the send, that body is sent if the task still answers the same
 * (same moment of its result, cost, format and encoding: a re-parse due by then builds it anew), so a bench measures the receiver, not the emulator's result building and
 * gzip. A body not built by its send is built then.
 */
export class PostbackBodies {
  readonly #world: SandboxWorld;
  readonly #ahead = new WeakMap<StoredTask, Prebuilt>();
  readonly #queue: StoredTask[] = [];
  #running = false;

  constructor(world: SandboxWorld) {
    this.#world = world;
  }

  /** Queues a postback task's body to be built ahead (only with `prebuildPostbacks` on). */
  prebuild(task: StoredTask): void {
    if (!this.#world.prebuildPostbacks || task.callbackSpec?.kind !== 'postback') return;
    this.#queue.push(task);
    if (!this.#running) {
      this.#running = true;
      setImmediate(() => this.#next());
    }
  }

  /** Builds the next queued body, one a turn of the event loop, so API calls are answered in between. */
  #next(): void {
    const task = this.#queue.shift();
    if (!task) {
      this.#running = false;
      return;
    }
    if (!task.completed && task.callbackState === 'pending' && !this.#ahead.has(task)) this.#buildAhead(task);
    setImmediate(() => this.#next());
  }

  /** The body as the task will be sent when done, built on a copy of it (nothing refunded, nothing completed). */
  #buildAhead(task: StoredTask): void {
    const w = this.#world;
    const shadow: StoredTask = { ...task };
    completeTask(w.seed, shadow, NO_ACCOUNT, w.readings);
    const built = buildBody(w.seed, shadow, shadow.readyAtMs, NO_ACCOUNT, w.readings);
    // The result is the task's own, built for the moment it is done: the task keeps it, so
    // completing it later builds nothing.
    if (task.result === undefined) {
      task.result = shadow.result;
      task.resultAtMs = shadow.resultAtMs;
      task.resultText = undefined;
    }
    this.#ahead.set(task, {
      ...built,
      resultAtMs: shadow.resultAtMs,
      costMicros: shadow.netCostMicros ?? shadow.costMicros,
      format: getterOf(task)?.format,
      encoding: w.readings.postbackEncoding,
    });
  }

  /** The body of a done task's postback, sent now: built ahead when it still holds, else built. */
  body(task: StoredTask): PostbackBody {
    const w = this.#world;
    const nowMs = w.now().getTime();
    const ahead = this.#ahead.get(task);
    if (ahead) {
      completeTask(w.seed, task, w.account, w.readings);
      // A result is a function of the seed, the task and its moment: one the store let go and
      // built again (task-store.ts RESULTS_KEPT) is the same result, so the moment is compared.
      if (
        ahead.resultAtMs === resultMoment(task, nowMs) &&
        ahead.costMicros === (task.netCostMicros ?? task.costMicros) &&
        ahead.format === getterOf(task)?.format &&
        ahead.encoding === w.readings.postbackEncoding
      ) {
        w.stats.postbackBody(true);
        return { body: ahead.body, headers: ahead.headers };
      }
      this.#ahead.delete(task);
    }
    w.stats.postbackBody(false);
    return buildBody(w.seed, task, nowMs, w.account, w.readings);
  }

  /** The task's postback was answered 200: a body built ahead is no longer needed. */
  delivered(task: StoredTask): void {
    this.#ahead.delete(task);
  }
}
