import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { RawResponse } from '../client/index.js';
import { redactCallbackSecrets } from '../redact.js';
import { GroupCommit, landedLine, rawFileName, writeDurably, type LandingContext } from '../warehouse/index.js';

/** A callback body on disk: the task it carries, the file, what its task status said, and its raw index row. */
export interface LandedCallback {
  taskId: string;
  callId: string;
  /** Absolute path of the landed file (`raw/<day>/<kind>--<run>-cb-<n>-<call>.ndjson.gz`). */
  file: string;
  /** Callbacks landed in that file, this one included (those that arrived together share it). */
  filePeers: number;
  /** Task status 20000 with a result: rows to load. Otherwise the task failed at the service. */
  ok: boolean;
  statusCode: number;
  message: string;
  /** Other task ids the body carried: ignored (never landed, never loaded), for the log. */
  ignored: string[];
  /** What `raw_responses` keeps of it (the loader indexes it without reading the file again). */
  index: {
    path: string;
    endpointId: string;
    receivedAt: Date;
    kind: string;
    parsed: boolean;
    taskIds: string[];
    shape: string[];
    taskCosts: { taskId: string; costUsd: number }[];
    /** Its head for `raw_heads` (raw-landing.ts `headOf`), or null. */
    head: string | null;
  };
}

/** A postback to land: its body as received and where it came from. */
export interface CallbackBody {
  taskId: string;
  /** The task's `task_get` path: what the body is the answer of (it picks the kind). */
  path: string;
  endpointId: string;
  body: string;
  receivedAt: Date;
  /** Why the task's entry is not the answer to what was posted (a forged body), or null: checked before anything lands. */
  verify?: (entry: TaskEntry) => string | null;
}

/** A body that is not the JSON envelope of the task its URL names: refused, not landed. */
export class CallbackBodyError extends Error {}

export type TaskEntry = { id?: unknown; status_code?: unknown; status_message?: unknown; data?: unknown };

/** A body read as JSON and narrowed to one task. */
export interface NarrowedBody {
  /** The text to land: the body as given when it held only that task, else the narrowed envelope. */
  body: string;
  /** `JSON.parse(body)`. */
  value: unknown;
  ignored: string[];
  entry: TaskEntry;
}

/**
 * The body narrowed to the task its URL names: a postback is accepted for one task only,
 * so any other entry of `tasks[]` (another run's task, another pipeline's, an unknown id)
 * is dropped before anything lands. A body holding only that task is kept byte for byte.
 * Throws {@link CallbackBodyError} when the body is not JSON or does not hold the task.
 */
export function narrowToTask(body: string, taskId: string): NarrowedBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new CallbackBodyError('body is not JSON');
  }
  const tasks = (parsed as { tasks?: unknown } | null)?.tasks;
  if (!Array.isArray(tasks)) throw new CallbackBodyError('body is not a task envelope (no tasks[])');
  const mine = tasks.filter((t): t is TaskEntry => typeof t === 'object' && t !== null && (t as TaskEntry).id === taskId);
  if (mine.length !== 1)
    throw new CallbackBodyError(
      mine.length === 0 ? 'body does not hold the task in the URL' : 'body holds the task in the URL more than once',
    );
  const ignored = tasks
    .filter((t) => !mine.includes(t as TaskEntry))
    .map((t) => (typeof (t as TaskEntry | null)?.id === 'string' ? String((t as TaskEntry).id) : '(no id)'));
  if (ignored.length === 0) return { body, value: parsed, ignored, entry: mine[0]! };
  const narrowed = { ...(parsed as object), tasks: mine, tasks_count: 1 };
  return { body: JSON.stringify(narrowed), value: narrowed, ignored, entry: mine[0]! };
}

/**
 * The body as it lands: callback secrets cut out (the service echoes the task's
 * `postback_url` in `data`), read as JSON once, and narrowed to the task. A body that
 * `verify` finds forged is refused. The check reads what the service sent: when cutting
 * the secrets out changed the text and the cut body fails the check, the body as sent is
 * checked instead.
 */
function acceptBody(input: CallbackBody): NarrowedBody {
  const redacted = redactCallbackSecrets(input.body);
  const narrowed = narrowToTask(redacted, input.taskId);
  let forged = input.verify?.(narrowed.entry);
  if (forged && redacted !== input.body) forged = input.verify!(narrowToTask(input.body, input.taskId).entry);
  if (forged) throw new CallbackBodyError(`body is not the answer to the task posted: ${forged}`);
  return narrowed;
}

interface Waiting {
  line: string;
  kind: string;
  day: string;
  out: Omit<LandedCallback, 'file' | 'filePeers'>;
  done: (file: string | Error, peers: number) => void;
}

/**
 * Lands postback bodies exactly as the client lands a response: the same NDJSON line
 * (under the task's `task_get` path, method POST, no charge headers), gzip, fsynced and
 * renamed into place. Callbacks that arrive together share one file per kind (one fsync
 * for all of them, and later one file for DuckDB to open instead of hundreds); each
 * `land` resolves once its file is durable. Only files are written here, so a callback is
 * acknowledged without waiting for the database: the lines carry their own index data,
 * and the loader (or the next run) indexes them with `reindexRaw`. Callbacks are not
 * calls this tool made, so they get no ledger row.
 */
export class CallbackLanding {
  #seq = 0;
  readonly #groups = new GroupCommit<Waiting>((group) => this.#write(group));

  constructor(
    private readonly warehouseDir: string,
    private readonly ctx: LandingContext,
  ) {}

  land(input: CallbackBody): Promise<LandedCallback> {
    const narrowed = acceptBody(input);
    const raw: RawResponse = {
      callId: randomUUID(),
      receivedAt: input.receivedAt,
      method: 'POST',
      path: input.path,
      endpointId: input.endpointId,
      httpStatus: 200,
      charge: { requestId: null, chargeCny: null, costUsd: null, balanceCny: null },
      tasksSent: 0,
      body: narrowed.body,
    };
    // The line names the task it was accepted for: a later load (after a crash, a replay)
    // takes rows of that task only, whatever else the file holds.
    const landed = landedLine(raw, this.ctx, { callback: true, callbackTask: input.taskId, redactedAndParsed: { value: narrowed.value } });
    const ok = landed.taskIds.includes(input.taskId);
    const e = narrowed.entry;
    const status = ok
      ? { statusCode: 20000, message: 'Ok.' }
      : {
          statusCode: typeof e.status_code === 'number' ? e.status_code : 0,
          message: typeof e.status_message === 'string' ? e.status_message : '',
        };
    const index = {
      path: raw.path,
      endpointId: raw.endpointId,
      receivedAt: raw.receivedAt,
      kind: landed.kind,
      parsed: landed.parsed,
      taskIds: landed.taskIds,
      shape: landed.shape,
      taskCosts: landed.taskCosts,
      head: landed.head,
    };
    const out = { taskId: input.taskId, callId: raw.callId, ok, ...status, ignored: narrowed.ignored, index };
    return new Promise((resolve, reject) => {
      this.#groups.push({
        line: landed.line,
        kind: landed.kind,
        day: raw.receivedAt.toISOString().slice(0, 10),
        out,
        done: (file, filePeers) => (file instanceof Error ? reject(file) : resolve({ ...out, file, filePeers })),
      });
    });
  }

  async #write(group: Waiting[]): Promise<void> {
    const files = new Map<string, Waiting[]>();
    for (const w of group) {
      const key = `${w.day}\0${w.kind}`;
      const members = files.get(key);
      if (members) members.push(w);
      else files.set(key, [w]);
    }
    await Promise.all(
      [...files.values()].map(async (members) => {
        const first = members[0]!;
        const raw = join(this.warehouseDir, 'raw');
        const file = rawFileName(raw, {
          day: first.day,
          kind: first.kind,
          runId: this.ctx.runId,
          seq: ++this.#seq,
          callId: first.out.callId,
          callback: true,
        });
        try {
          // The fastest gzip level: the file is read once by the loader and compacted later, and
          // the default level costs several times its CPU for each postback.
          await writeDurably(file, gzipSync(members.map((m) => `${m.line}\n`).join(''), { level: 1 }));
          for (const m of members) m.done(file, members.length);
        } catch (err) {
          for (const m of members) m.done(err instanceof Error ? err : new Error(String(err)), members.length);
        }
      }),
    );
  }
}
