import { randomUUID } from 'node:crypto';
import { open, rename } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { redactCallbackSecrets } from '../../redact.js';
import { CALLS_KIND, kindOfPath } from '../normalize/result-tables/index.js';
import { FILE_MODE, ownerOnlyDir } from '../owner-only.js';
import { GroupCommit } from './group-commit.js';
import { rawFileName, rawIndexWriter } from './raw-index.js';
import { ledgerWriter, type CollectedCost } from '../ledger.js';

/** Kind of a body that is not JSON: landed as received, reported, never loaded. */
export const MALFORMED_KIND = '_malformed';
import { shapeOf } from '../normalize/shape.js';
import type { Warehouse } from '../warehouse.js';

/**
 * One response as the client received it, the record the raw landing stores: the body as
 * sent, its charge headers and what was asked. The warehouse owns this type; the client
 * hands it one of these and knows nothing of storage.
 */
export interface RawResponse {
  callId: string;
  receivedAt: Date;
  method: 'GET' | 'POST';
  path: string;
  endpointId: string;
  httpStatus: number;
  charge: { requestId: string | null; chargeCny: string | null; costUsd: string | null; balanceCny: string | null };
  /** Tasks sent in the body (0 for GET, 1 for a `/v1` body). */
  tasksSent: number;
  body: string;
  /** The name of what was asked (the client's `requestHash`: a hash of the request sent), if it had a body. */
  requestHash?: string | null;
}

export interface LandingContext {
  runId: string;
  pipeline: string;
}

/** One landed response: the NDJSON line and what the raw index keeps of it. */
export interface LandedLine {
  line: string;
  kind: string;
  parsed: boolean;
  taskIds: string[];
  shape: string[];
  refundCny: string;
  /** The `cost` of each task the body carries a result for (`taskIds`): the net cost a refund is measured by. */
  taskCosts: { taskId: string; costUsd: number }[];
  /** What `raw_heads` keeps of it (headOf), or null. */
  head: string | null;
}

/**
 * The landed line of a response. A JSON body goes in `body` as JSON (not as a string), so
 * DuckDB reads it with explicit column types at full speed; when re-serializing it would
 * not give back the exact bytes received (pretty-printing, a number JSON cannot hold), the
 * bytes are also kept verbatim in `body_text`. A body that is not JSON is kept as a string
 * in `body`, under the kind `_malformed`, so it never breaks a typed read. The exact bytes
 * are always recoverable: `body_text`, else `body` if it is a string, else
 * `JSON.stringify(body)`; except that callback secrets are cut out of it first (the service
 * echoes a task's `postback_url` in `data`, see `redactCallbackSecrets`).
 *
 * A callback's line names the one task it was accepted for (`callbackTask`): only that id
 * is indexed, so a load never takes another task's rows from it.
 */
export function landedLine(raw: RawResponse, ctx: LandingContext, opts: { callback?: boolean; callbackTask?: string } = {}): LandedLine {
  raw = { ...raw, body: redactCallbackSecrets(raw.body) };
  let parsed: unknown;
  let ok = true;
  try {
    parsed = JSON.parse(raw.body);
  } catch {
    ok = false;
  }
  // An answer with results is a JSON object: other JSON (a number, a string, a list, null) at a
  // path of results is kept as a malformed body, which no typed read meets.
  const pathKind = kindOfPath(raw.path);
  if (ok && !isObject(parsed) && pathKind !== CALLS_KIND) ok = false;
  let text = ok ? JSON.stringify(parsed) : null;
  // A lone surrogate escaped in a string (`\ud800`): DuckDB refuses the whole file that holds
  // it. The body is landed with U+FFFD in its place, and the bytes received in `body_text`.
  if (text !== null && text.includes(LONE_SURROGATE_ESCAPE)) {
    const clean = wellFormed(parsed);
    const cleanText = JSON.stringify(clean);
    if (cleanText !== text) [parsed, text] = [clean, cleanText];
  }
  const exact = text === raw.body;
  const kind = ok ? pathKind : MALFORMED_KIND;
  const refund = raw.charge.chargeCny?.startsWith('-') ? raw.charge.chargeCny.slice(1) : '0';
  const meta = {
    call_id: raw.callId,
    run_id: ctx.runId,
    pipeline: ctx.pipeline,
    received_at: raw.receivedAt.toISOString(),
    method: raw.method,
    path: raw.path,
    endpoint_id: raw.endpointId,
    kind,
    http_status: raw.httpStatus,
    request_id: raw.charge.requestId,
    charge_cny: raw.charge.chargeCny,
    cost_usd: raw.charge.costUsd,
    balance_cny: raw.charge.balanceCny,
    refund_cny: refund,
    tasks_sent: raw.tasksSent,
    // What was asked: a paid answer is found again by it rather than bought twice (landedAnswer).
    ...(raw.requestHash ? { request_hash: raw.requestHash } : {}),
    parsed: ok,
    // A callback the service sent us, not a call we made: no ledger row, even when reindexed.
    ...(opts.callback ? { callback: true } : {}),
    ...(opts.callbackTask ? { callback_task: opts.callbackTask } : {}),
  };
  const shape = ok && kind !== CALLS_KIND ? shapeOf(parsed) : [];
  const head = JSON.stringify(meta).slice(0, -1);
  const body = ok ? text : JSON.stringify(raw.body);
  const line = `${head},"shape":${JSON.stringify(shape)},"body":${body}${ok && !exact ? `,"body_text":${JSON.stringify(raw.body)}` : ''}}`;
  const done = ok ? doneTasks(parsed) : { ids: [], costs: [] };
  // A callback line is accepted for one task: only that task is indexed (and refunded) from it.
  const mine = (id: string) => !opts.callbackTask || id === opts.callbackTask;
  const bodyHead = ok && text !== null && kind !== CALLS_KIND ? headOf(parsed, text.length) : null;
  return { line, kind, parsed: ok, taskIds: done.ids.filter(mine), shape, refundCny: refund, taskCosts: done.costs.filter((c) => mine(c.taskId)), head: bodyHead };
}

const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/**
 * How JSON.stringify begins a lone surrogate (`\ud800`, lower case; a pair it writes as is). Also
 * found after an escaped backslash (`\\ud…`): wellFormed then changes nothing. A search for the
 * text, not a pattern: 4 µs a 35 KB SERP body against 10 (JSON.parse takes 120).
 */
const LONE_SURROGATE_ESCAPE = '\\ud';

/** A lone UTF-16 surrogate (half of a pair, without the other half). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `v` with every lone surrogate of its strings and keys replaced by U+FFFD. */
function wellFormed(v: unknown): unknown {
  if (typeof v === 'string') return v.replace(LONE_SURROGATE, '\ufffd');
  if (Array.isArray(v)) return v.map(wellFormed);
  if (!isObject(v)) return v;
  // No prototype: a key named __proto__ is copied as a key, as JSON.parse made it.
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(v)) out[k.replace(LONE_SURROGATE, '\ufffd')] = wellFormed(v[k]);
  return out;
}

/**
 * The head of a `/v3` answer (`raw_heads`): the body as landed without, in each of its
 * `tasks[].result[]` objects, every key whose value is a list holding an object (a SERP's
 * `items`: the rows of a deeper table). The result-level tables read it instead of the body,
 * which they would parse whole a second time after the items' read (load-landed.ts). Null
 * when nothing would be dropped, or when the head would be more than a quarter of the body
 * (`bodyChars`): it is kept for a year, and is worth it only where it is small.
 */
export function headOf(body: unknown, bodyChars: number): string | null {
  if (!isObject(body) || !Array.isArray(body.tasks)) return null;
  let dropped = false;
  const tasks = body.tasks.map((t: unknown) => {
    if (!isObject(t) || !Array.isArray(t.result)) return t;
    const result = t.result.map((r: unknown) => {
      if (!isObject(r)) return r;
      // No prototype: a key named __proto__ is copied as a key, as JSON.parse made it.
      const kept: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const k of Object.keys(r)) {
        const v = r[k];
        if (Array.isArray(v) && v.some(isObject)) dropped = true;
        else kept[k] = v;
      }
      return kept;
    });
    return { ...t, result };
  });
  if (!dropped) return null;
  const head = JSON.stringify({ ...body, tasks });
  return head.length * 4 <= bodyChars ? head : null;
}

/** Tasks of a body that carry their result (status 20000, a result array), with their `cost` where it is a number. */
function doneTasks(body: unknown): { ids: string[]; costs: { taskId: string; costUsd: number }[] } {
  const tasks = (body as { tasks?: unknown } | null)?.tasks;
  const out = { ids: [] as string[], costs: [] as { taskId: string; costUsd: number }[] };
  if (!Array.isArray(tasks)) return out;
  for (const t of tasks as { id?: unknown; status_code?: unknown; result?: unknown; cost?: unknown }[]) {
    if (!t || typeof t.id !== 'string' || t.status_code !== 20000 || !Array.isArray(t.result)) continue;
    out.ids.push(t.id);
    if (typeof t.cost === 'number' && Number.isFinite(t.cost)) out.costs.push({ taskId: t.id, costUsd: t.cost });
  }
  return out;
}

/** A response waiting to be written and indexed with the others that came with it. */
interface Waiting {
  raw: RawResponse;
  landed: LandedLine;
  /** Its own gzip member. */
  gz: Buffer;
  /** Set when written: the file (relative to the warehouse) and the member's offset in it. */
  file?: string;
  offset?: bigint;
  done: (err?: unknown) => void;
}

/** How a landing indexes its responses. */
export interface RawLandingOptions {
  /**
   * Index free reads (GET answers without a charge: `task_get`, `tasks_ready`, ...) in
   * batches rather than before their call returns: their files are durable at once, and
   * their `raw_responses` and `ledger` rows are committed at most {@link INDEX_EVERY_MS}
   * later, or as soon as something reads them ({@link Warehouse.flushIndex}, which loads,
   * reindexing and compaction call first). A crash in between loses no row:
   * `reindexRaw` rebuilds both from the files. Charged calls and POSTs are always indexed,
   * with their ledger rows, before their call returns. Default false.
   */
  deferFreeReads?: boolean;
  /**
   * The connection the index and ledger rows are written on (a sibling of the warehouse's).
   * With deferred rows this is needed: a flush commits at any moment, and on the caller's
   * own connection it would take in whatever statements the caller runs meanwhile.
   */
  indexOn?: Warehouse;
}

/** Longest a deferred response waits for its index and ledger rows. */
const INDEX_EVERY_MS = 1000;

/**
 * Lands responses durably before anything parses them for use: each body's NDJSON line as
 * its own gzip member in `raw/<date>/<kind>--<run>-<n>-<call>.ndjson.gz` (fsynced, renamed
 * into place), indexed in `raw_responses` with its `ledger` row. The kind leads the name,
 * so the files of one kind (bodies of one shape family) are read together with one
 * explicit schema.
 *
 * Responses that arrive together (calls in flight at once) land together: one file per
 * kind and one transaction for all of them, so concurrent calls never open two
 * transactions on the one connection, a commit and an fsync (milliseconds each) are paid
 * per group rather than per response, and loads open fewer files. `land` resolves once
 * its file is durable and its rows are committed (for a deferred free read, once its file
 * is durable: see {@link RawLandingOptions.deferFreeReads}).
 */
export class RawLanding {
  private seq = 0;
  private readonly groups = new GroupCommit<Waiting>((group) => this.commit(group));
  /** Landed free reads whose rows wait for the next index flush. */
  private unindexed: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly wh: Warehouse,
    private readonly ctx: LandingContext,
    private readonly opts: RawLandingOptions = {},
  ) {
    if (opts.deferFreeReads && !opts.indexOn) throw new Error('deferred index rows need a connection of their own (indexOn)');
    if (opts.deferFreeReads) wh.onFlushIndex(() => this.flush());
  }

  /** The `Lander` the client calls. */
  readonly land = async (raw: RawResponse): Promise<void> => {
    const landed = landedLine(raw, this.ctx);
    const gz = gzipSync(landed.line + '\n');
    await new Promise<void>((resolve, reject) => {
      this.groups.push({ raw, landed, gz, done: (err) => (err === undefined ? resolve() : reject(err)) });
    });
  };

  /**
   * The ledger row of a charged POST about to be sent (the client's `sending`), committed before
   * it goes, on the connection the landing's rows go to: `http_status` and `charge_cny` null, as
   * no answer came yet. Its answer's row replaces it when landed (ledgerWriter.calls). One whose
   * answer never comes (a timeout, a dropped connection, this process killed while it was out)
   * keeps it: its charge is unknown until `id_list` tells which of its tasks were created
   * (ledgerWriter.estimateLost). No raw file: a reindex cannot rebuild it.
   */
  readonly sending = async (call: { callId: string; at: Date; method: string; path: string; endpointId: string; tasksSent: number }): Promise<void> => {
    const wh = this.opts.indexOn ?? this.wh;
    await wh.transaction(() => ledgerWriter.sent(wh, this.ctx, call));
  };

  /** Removes the row `sending` wrote for an attempt that made no connection (the client's `notSent`): nothing was sent. */
  readonly notSent = async (callId: string): Promise<void> => {
    const wh = this.opts.indexOn ?? this.wh;
    await wh.transaction(() => ledgerWriter.unsent(wh, callId));
  };

  /**
   * Commits the rows of every deferred response landed so far (flushes run one after
   * another, so when this resolves, rows an earlier flush was committing are in too).
   */
  flush(): Promise<void> {
    const next = this.flushing.catch(() => {}).then(() => this.flushNow());
    this.flushing = next;
    return next;
  }

  private flushing: Promise<void> = Promise.resolve();

  private async flushNow(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.unindexed.splice(0);
    if (rows.length > 0) {
      try {
        await this.index(rows);
      } catch (err) {
        this.unindexed.unshift(...rows);
        throw err;
      }
    }
  }

  private deferred(w: Waiting): boolean {
    const charge = w.raw.charge.chargeCny;
    return this.opts.deferFreeReads === true && w.raw.method === 'GET' && (charge === null || Number(charge) === 0);
  }

  /** Writes a group's files, then indexes what is not deferred; every member is settled. */
  private async commit(group: Waiting[]): Promise<void> {
    const now = group.filter((w) => !this.deferred(w));
    const later = group.filter((w) => this.deferred(w));
    try {
      await this.write(group);
      // Durable: a deferred read's call may go on; its rows go with the next flush.
      this.unindexed.push(...later);
      later.forEach((w) => w.done());
      if (later.length > 0) this.timer ??= setTimeout(() => void this.flush().catch(() => {}), INDEX_EVERY_MS); // a failed flush keeps its rows for the next
      if (now.length > 0) await this.index(now);
      now.forEach((w) => w.done());
    } catch (err) {
      // A settled deferred read ignores the error; its rows wait in `unindexed`.
      group.forEach((w) => w.done(err ?? new Error('landing failed')));
    }
  }

  /** One file per day and kind of the group, each response its own gzip member in it. */
  private async write(group: Waiting[]): Promise<void> {
    const files = new Map<string, Waiting[]>();
    for (const w of group) {
      const key = `${w.raw.receivedAt.toISOString().slice(0, 10)}/${w.landed.kind}`;
      files.set(key, [...(files.get(key) ?? []), w]);
    }
    await Promise.all(
      [...files].map(async ([key, members]) => {
        const [day, kind] = key.split('/') as [string, string];
        const file = rawFileName(this.wh.rawDir, { day, kind, runId: this.ctx.runId, seq: ++this.seq, callId: members[0]!.raw.callId });
        let offset = 0n;
        for (const m of members) {
          m.file = relative(this.wh.dir, file);
          m.offset = offset;
          offset += BigInt(m.gz.length);
        }
        await writeDurably(file, members.length === 1 ? members[0]!.gz : Buffer.concat(members.map((m) => m.gz)));
      }),
    );
  }

  /** The raw index and ledger rows of a group of landed responses, in one transaction. */
  private async index(group: Waiting[]): Promise<void> {
    const wh = this.opts.indexOn ?? this.wh;
    await wh.transaction(async () => {
      await rawIndexWriter.rows(
        wh,
        this.ctx.runId,
        group.map((w) => ({
          callId: w.raw.callId,
          endpointId: w.raw.endpointId,
          path: w.raw.path,
          httpStatus: w.raw.httpStatus,
          requestId: w.raw.charge.requestId,
          file: w.file!,
          bytes: BigInt(w.gz.length),
          receivedAt: w.raw.receivedAt,
          kind: w.landed.kind,
          parsed: w.landed.parsed,
          taskIds: w.landed.taskIds,
          shape: w.landed.shape,
          byteOffset: w.offset!,
          head: w.landed.head,
          requestHash: w.raw.requestHash ?? null,
        })),
        { onlyNew: false },
      );
      await ledgerWriter.calls(
        wh,
        this.ctx,
        group.map((w) => ({
          callId: w.raw.callId,
          endpointId: w.raw.endpointId,
          method: w.raw.method,
          path: w.raw.path,
          httpStatus: w.raw.httpStatus,
          requestId: w.raw.charge.requestId,
          chargeCny: w.raw.charge.chargeCny,
          refundCny: w.landed.refundCny,
          costUsd: w.raw.charge.costUsd,
          balanceCny: w.raw.charge.balanceCny,
          tasks: w.raw.tasksSent,
          calledAt: w.raw.receivedAt,
        })),
      );
      // A result whose cost is below what its POST answered: the unused depth came back.
      await ledgerWriter.refunds(wh, group.flatMap((w): CollectedCost[] => w.landed.taskCosts.map((c) => ({ ...c, seenAt: w.raw.receivedAt }))));
    });
  }
}

/** Temp files of writeDurably this process is writing now: a warehouse opened meanwhile leaves them (stale-temps.ts). */
export const TEMPS_IN_FLIGHT = new Set<string>();

/** Writes a file so that it is either absent or whole: temp file, fsync, rename. */
export async function writeDurably(file: string, data: Uint8Array): Promise<void> {
  const tmp = `${file}.${randomUUID().slice(0, 8)}.tmp`;
  TEMPS_IN_FLIGHT.add(resolve(tmp));
  try {
    await writeTemp(file, tmp, data);
  } finally {
    TEMPS_IN_FLIGHT.delete(resolve(tmp));
  }
}

async function writeTemp(file: string, tmp: string, data: Uint8Array): Promise<void> {
  let fh;
  try {
    fh = await open(tmp, 'wx', FILE_MODE);
  } catch (err) {
    // The day's folder is made on its first file, not before every write.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await ownerOnlyDir(dirname(file));
    fh = await open(tmp, 'wx', FILE_MODE);
  }
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
}
