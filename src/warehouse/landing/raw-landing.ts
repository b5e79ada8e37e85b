import { relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { GroupCommit } from './group-commit.js';
import { landedLine, type LandedLine, type LandingContext, type RawResponse } from './landed-line.js';
import { rawFileName, rawIndexWriter } from './raw-index.js';
import { writeDurably } from './write-durably.js';
import { ledgerWriter, type CollectedCost } from '../ledger.js';
import type { Warehouse } from '../warehouse.js';

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
