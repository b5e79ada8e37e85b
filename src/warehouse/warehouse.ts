import { AsyncLocalStorage } from 'node:async_hooks';
import { join, resolve } from 'node:path';
import { DuckDBConnection, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { EtlError } from '../errors.js';
import { pathError } from '../paths.js';
import { createTableSql, ident, sqlType } from './columns.js';
import { DECLARED_TABLES } from './normalize/result-tables/index.js';
import { FileGuard } from './file-guard.js';
import { ensurePublishTables } from './publish/manifest-tables.js';
import { ownerOnlyDir, ownerOnlyFile } from './owner-only.js';
import { removeStaleTemps } from './landing/stale-temps.js';
import { ALL_TABLES } from './tables.js';
import { openWaiting } from './wait-for-lock.js';
import { keepByteOrderMarks } from './duckdb-text.js';

keepByteOrderMarks();

/**
 * The write-ahead log a commit may leave before DuckDB checkpoints it into the database file
 * (DuckDB's default is 16 MB). With a year of history a checkpoint is costly, and at the default
 * a large night would make several, at the commits of its loads and of its models
 * (docs/performance.md); on an empty warehouse they are cheap. With 1 GB a night checkpoints once, as the
 * run's last step (`checkpoint`), or when the warehouse closes (docs/warehouse.md,
 * "Checkpoints"). Committed rows are as durable either way (the log is written at each
 * commit); a crash leaves at most this much log to replay at the next open.
 */
export const CHECKPOINT_THRESHOLD = '1GB';

/**
 * DuckDB's worker threads from `PIPELINE_DUCKDB_THREADS` (a whole number from 1), else DuckDB's
 * own default, one a core: for a machine shared with other work (the test suite runs four files
 * at once on two cores and sets 1: a small night then takes 12% less CPU).
 */
export function duckdbThreads(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[1-9]\d{0,3}$/.test(value)) {
    throw new EtlError('ETL_CONFIG_INVALID', `PIPELINE_DUCKDB_THREADS=${JSON.stringify(value)}: DuckDB's threads must be a whole number from 1 (unset: one a core)`);
  }
  return value;
}

/** DuckDB's memory limit unless `PIPELINE_DUCKDB_MEMORY` says otherwise (DuckDB's own default is 80% of RAM). */
const DEFAULT_MEMORY_LIMIT = '4GB';

/**
 * The warehouse folder: `warehouse.duckdb` (state, raw index, typed tables, ledger),
 * `raw/` (landed bodies) and `parquet/` (Hive-partitioned copies for BI tools).
 */
export class Warehouse {
  private constructor(
    readonly dir: string,
    private readonly instance: DuckDBInstance,
    readonly db: DuckDBConnection,
    private readonly ownsInstance = true,
    /** Shared with siblings: every connection sees the same landing's pending rows. */
    private readonly flushers: Set<() => Promise<void>> = new Set(),
    /** Shared with siblings: DuckDB's settings are global to the instance (`optimizerOff`, `releaseMemory`). */
    private readonly settings: InstanceSettings = { holds: 0, before: '', chain: Promise.resolve() },
    /** DuckDB's `memory_limit` as the warehouse was opened with it (`releaseMemory` puts it back). */
    private readonly memoryLimit = DEFAULT_MEMORY_LIMIT,
    /** Shared with siblings: the identity of `warehouse.duckdb` as opened (file-guard.ts). */
    private readonly guard?: FileGuard,
  ) {}

  /**
   * Throws `ETL_WAREHOUSE_GONE` when `warehouse.duckdb` was deleted or replaced since it was
   * opened (what the open file held is first copied to a rescue file): checked before every
   * transaction and before the warehouse closes, so a run does not go on, or end "completed",
   * writing to a file that is gone.
   */
  async checkFile(): Promise<void> {
    await this.guard?.check(this.instance);
  }

  /**
   * Runs `op` on the instance's own connection, after the changes queued before it: settings
   * are global to the DuckDB instance, and this connection is never in a transaction that a
   * failed statement could have aborted.
   */
  private onOwnConnection(op: (c: DuckDBConnection) => Promise<void>): Promise<void> {
    const s = this.settings;
    const turn = s.chain.then(async () => op((s.conn ??= await this.instance.connect())));
    s.chain = turn.catch(() => {});
    return turn;
  }

  /**
   * Hands back the memory DuckDB holds from the step before, so the next step starts from the
   * night's own needs and not from what the step before read or wrote. DuckDB keeps the blocks
   * of tables it has read cached up to its memory limit, and the rows committed since the last
   * checkpoint uncompressed in memory (the warehouse checkpoints once a run, CHECKPOINT_THRESHOLD),
   * which would otherwise sit under each model and the publish that follow. Lowering the
   * limit makes DuckDB drop the cached blocks and write those rows to its temp folder (they stay
   * in the write-ahead log, as durable as before) until nothing more can go, then refuse the
   * limit; the limit is then put back (its cost: docs/performance.md).
   * Call it between statements, with no query of this instance running: one that asked for
   * memory in between could be refused.
   *
   * With `unlessBelow` (bytes), nothing is done when DuckDB holds less than that
   * (`duckdb_memory()`): what a small night leaves is not worth the two settings (10 to 40 ms),
   * nor reading it back from the temp folder after. Returns whether it handed back.
   */
  async releaseMemory(o: { unlessBelow?: number } = {}): Promise<boolean> {
    let released = false;
    await this.onOwnConnection(async (c) => {
      if (o.unlessBelow !== undefined && (await memoryHeld(c)).total < o.unlessBelow) return;
      released = true;
      await this.lowerLimitAWhile(c, '1MB');
    });
    return released;
  }

  /**
   * Drops the table blocks DuckDB keeps cached (`duckdb_memory()`'s BASE_TABLE: blocks it read,
   * and those a checkpoint just wrote, which it keeps loaded up to its memory limit), while other
   * connections may be running: the limit is lowered for a moment to what DuckDB holds besides
   * them plus `headroomBytes`, which a running query may still take (past it, DuckDB evicts or
   * spills before it refuses), then put back. A night's checkpoints would otherwise add the
   * night's whole compressed size to the process (about 300 MB for 100,000 SERP tasks). Nothing
   * is done when the cache holds less than `unlessBelow`. Returns whether it lowered the limit.
   */
  async dropCachedBlocks(o: { headroomBytes: number; unlessBelow: number }): Promise<boolean> {
    let dropped = false;
    await this.onOwnConnection(async (c) => {
      const m = await memoryHeld(c);
      if (m.cached < o.unlessBelow) return;
      dropped = true;
      await this.lowerLimitAWhile(c, `${Math.ceil((m.total - m.cached + o.headroomBytes) / 2 ** 20)}MiB`);
    });
    return dropped;
  }

  /**
   * Sets DuckDB's memory limit to `limit`, so that it evicts what it can, then puts back the
   * limit the warehouse was opened with. DuckDB refuses a limit below what stays pinned (or what
   * other connections took meanwhile) after evicting what it could: that refusal is expected.
   */
  private async lowerLimitAWhile(c: DuckDBConnection, limit: string): Promise<void> {
    try {
      await c.run(`SET memory_limit = '${limit}'`);
    } catch {
      // Evicted what it could, then refused the limit.
    } finally {
      await c.run(`SET memory_limit = '${this.memoryLimit.replaceAll("'", "''")}'`);
    }
  }

  /**
   * Writes what the write-ahead log holds into the database file now, rather than when the
   * warehouse closes. A run calls it last, after `releaseMemory`: the checkpoint of a night's rows
   * into year-long tables takes memory of its own on top of what the process holds, so it should
   * start from as little as possible (docs/warehouse.md, "Checkpoints").
   */
  async checkpoint(): Promise<void> {
    await this.onOwnConnection(async (c) => {
      await c.run('CHECKPOINT');
    });
  }

  /**
   * A hold on DuckDB's optimizer `name` (one of `disabled_optimizers`): taken at once, given back
   * by `release` (once; later calls give the same promise). The setting is global to the DuckDB
   * instance, so the connections of one instance count their holds together: the first to take
   * it off keeps the setting as it was, the last to give its hold back puts it back. The changes
   * run in order on a connection of their own, which a failed statement of the holder (an aborted
   * transaction) cannot refuse, while the holder goes on: `ready` settles (never rejects) when the
   * change is made, so the holder can send other statements meanwhile and await it only before
   * those that need it. Another connection's statements meanwhile may get another plan, never
   * another result. The holds are counted for one optimizer (the loads' `build_side_probe_side`):
   * another name asked for while it is held is not applied.
   */
  optimizerOff(name: string): { ready: Promise<void>; release: () => Promise<void> } {
    const s = this.settings;
    const step = (op: (c: DuckDBConnection) => Promise<void>) => this.onOwnConnection(op).catch(() => {});
    const ready =
      s.holds++ === 0
        ? step(async (c) => {
            const rows = (await c.runAndReadAll(`SELECT current_setting('disabled_optimizers') AS v`)).getRowObjectsJS() as { v: string }[];
            s.before = rows[0]?.v ?? '';
            const names = s.before.split(',').map((x) => x.trim()).filter(Boolean);
            if (!names.includes(name)) await c.run(`SET disabled_optimizers = '${[...names, name].join(',')}'`);
          })
        : s.chain;
    let releasing: Promise<void> | undefined;
    const release = () =>
      (releasing ??= (async () => {
        if (--s.holds === 0) {
          await step(async (c) => {
            await c.run(s.before ? `SET disabled_optimizers = '${s.before.replaceAll("'", "''")}'` : `RESET disabled_optimizers`);
          });
        }
      })());
    return { ready, release };
  }

  /** Registers a landing whose index rows may wait (see `RawLanding`'s `deferFreeReads`). */
  onFlushIndex(flush: () => Promise<void>): void {
    this.flushers.add(flush);
  }

  /**
   * Commits the raw index and ledger rows that landings have deferred: called before
   * anything reads `raw_responses` or the ledger in the process that lands.
   */
  async flushIndex(): Promise<void> {
    for (const f of this.flushers) await f();
  }

  /**
   * Opens (and creates) the warehouse in `dir`, with every declared table. When another
   * process holds `warehouse.duckdb`, waits for it (see `openWaiting`) and then fails with
   * `ETL_WAREHOUSE_LOCKED`, naming the holder.
   */
  static async open(dir: string, o: { onWait?: (message: string) => void; waitSeconds?: number } = {}): Promise<Warehouse> {
    const root = resolve(dir);
    try {
      // Owner-only, whatever the umask: raw bodies, the ledger and the database are the user's alone.
      await ownerOnlyDir(root).catch((err: unknown) => {
        throw pathError(err, `--warehouse ${dir}`, 'Pass a folder you can write (it is made when missing, in a folder that is there).');
      });
      for (const d of [join(root, 'raw'), join(root, 'parquet')]) await ownerOnlyDir(d);
      // DuckDB takes 80% of RAM by default; a nightly job shares the machine, so the cap is
      // explicit (PIPELINE_DUCKDB_MEMORY, e.g. '8GB', raises it; spills go to a temp folder).
      const memoryLimit = process.env.PIPELINE_DUCKDB_MEMORY ?? DEFAULT_MEMORY_LIMIT;
      const threads = duckdbThreads(process.env.PIPELINE_DUCKDB_THREADS);
      const instance = await openWaiting(
        () =>
          DuckDBInstance.create(join(root, 'warehouse.duckdb'), {
            memory_limit: memoryLimit,
            checkpoint_threshold: CHECKPOINT_THRESHOLD,
            // DuckDB's allocator (jemalloc) hands freed pages back to the system from threads of
            // its own, rather than only when a thread that freed them allocates again: a night's
            // loads and checkpoints free hundreds of MB at a time (docs/performance.md).
            allocator_background_threads: 'true',
            // A bulk insert (a load, a model's build) writes each row group it fills to the file
            // at once, on the thread that filled it, while the other threads go on reading. By
            // default DuckDB buffers five row groups per thread (or a fifth of the memory limit
            // over the threads plus one: 273 MB at 4 GB and two threads) and writes them
            // together, which for a load of a million rows meant at its end, on one thread with
            // the others idle, with every row held until then: a million generic items loaded in
            // 0.85 to 0.86 s against 1.09 to 1.11, and SERP items at 644 to 650 MB of peak RSS
            // against 1,232 to 1,248 (docs/performance.md).
            write_buffer_row_group_count: '1',
            ...(threads ? { threads } : {}),
          }),
        { file: join(root, 'warehouse.duckdb'), onWait: o.onWait, ...(o.waitSeconds === undefined ? {} : { waitSeconds: o.waitSeconds }) },
      );
      for (const f of ['warehouse.duckdb', 'warehouse.duckdb.wal']) await ownerOnlyFile(join(root, f));
      // This process holds the file now, so no other one writes raw/: temp files left there by a
      // killed one go. Hygiene, not a condition of opening: a file that cannot go stays for the next open.
      await removeStaleTemps(root).catch(() => []);
      const guard = FileGuard.of(join(root, 'warehouse.duckdb'));
      const db = await instance.connect();
      const wh = new Warehouse(root, instance, db, true, undefined, undefined, memoryLimit, guard);
      // Dates of the service are UTC; without this a check_date would follow the host's zone.
      await db.run(`SET TimeZone = 'UTC'`);
      // Rows are keyed, never positional, so DuckDB may insert in parallel out of order, which
      // makes loads from the raw landing faster (docs/performance.md).
      await db.run(`SET preserve_insertion_order = false`);
      for (const t of [...ALL_TABLES, ...DECLARED_TABLES]) await db.run(createTableSql(t));
      // State tables of an older warehouse take the columns added since (appended, so positions hold).
      // duckdb_columns() rather than information_schema.columns: the same rows, read in a third of the time.
      const have = new Set(
        (await (await db.runAndReadAll(`SELECT table_name || '.' || column_name AS c FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main'`)).getRowObjects()).map((r) => String(r.c)),
      );
      for (const t of ALL_TABLES) {
        for (const c of t.columns) if (!have.has(`${t.name}.${c.name}`)) await db.run(`ALTER TABLE ${ident(t.name)} ADD COLUMN ${ident(c.name)} ${sqlType(c.kind)}`);
      }
      await ensurePublishTables(wh);
      return wh;
    } catch (err) {
      if (err instanceof EtlError) throw err;
      throw new EtlError('ETL_WAREHOUSE', `cannot open the warehouse at ${root}: ${(err as Error).message}. Check that the folder is writable and not open in another DuckDB process.`, { cause: err, context: { stage: 'warehouse' } });
    }
  }

  get rawDir(): string {
    return join(this.dir, 'raw');
  }

  get parquetDir(): string {
    return join(this.dir, 'parquet');
  }

  /** Runs a statement. */
  async run(sql: string, params?: DuckDBValue[]): Promise<void> {
    await this.db.run(sql, params);
  }

  /** Runs a query and returns its rows as plain JS objects. */
  async all<T = Record<string, unknown>>(sql: string, params?: DuckDBValue[]): Promise<T[]> {
    const reader = await this.db.runAndReadAll(sql, params);
    return reader.getRowObjectsJS() as T[];
  }

  /**
   * Runs `fn` in one transaction: all of it commits, or none of it. The connection has one transaction at a time, so
   * transactions begun concurrently (two live answers landed at once) wait their turn; a
   * transaction begun inside another (same async context) joins it.
   */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction.getStore()) return fn();
    await this.checkFile();
    const turn = this.queue.then(async () => {
      await this.db.run('BEGIN TRANSACTION');
      try {
        const out = await this.inTransaction.run(true, fn);
        await this.db.run('COMMIT');
        return out;
      } catch (err) {
        await this.db.run('ROLLBACK');
        throw err;
      }
    });
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  private queue: Promise<void> = Promise.resolve();
  private readonly inTransaction = new AsyncLocalStorage<boolean>();

  /**
   * A second connection to the same database, for work that runs beside this connection's
   * (the callback loader while batches are posted): its own transactions and temp tables,
   * which a single connection cannot keep apart. Close it before this one; closing it
   * leaves the database open.
   */
  async sibling(): Promise<Warehouse> {
    const db = await this.instance.connect();
    await db.run(`SET TimeZone = 'UTC'`);
    return new Warehouse(this.dir, this.instance, db, false, this.flushers, this.settings, this.memoryLimit, this.guard);
  }

  close(): void {
    this.db.closeSync();
    if (this.ownsInstance) {
      this.settings.conn?.closeSync();
      this.instance.closeSync();
    }
  }
}

/**
 * The global settings of one DuckDB instance as its connections change them: the holds on the
 * optimizer setting (`Warehouse.optimizerOff`), and the changes of any setting
 * (`releaseMemory` too), made in order on a connection of their own.
 */
interface InstanceSettings {
  /** Holds on the optimizer setting. */
  holds: number;
  /** The optimizer setting before the first hold. */
  before: string;
  /** The changes, in order. */
  chain: Promise<void>;
  /** The connection they run on. */
  conn?: DuckDBConnection;
}

/** Opens the warehouse, runs `fn`, and closes it whatever happens (kysely-ctl's `usingKysely`). */
export async function withWarehouse<T>(
  dir: string,
  fn: (wh: Warehouse) => Promise<T>,
  o: { onWait?: (message: string) => void } = {},
): Promise<T> {
  const wh = await Warehouse.open(dir, o);
  try {
    const out = await fn(wh);
    // A database file deleted or replaced under the work is not a success, whatever `fn` made of it.
    await wh.checkFile();
    return out;
  } finally {
    wh.close();
  }
}

/** What DuckDB holds (`duckdb_memory()`), in bytes: in all, and the table blocks it keeps cached (BASE_TABLE). */
async function memoryHeld(c: DuckDBConnection): Promise<{ total: number; cached: number }> {
  const [m] = (
    await c.runAndReadAll(
      `SELECT coalesce(sum(memory_usage_bytes), 0)::DOUBLE AS total, coalesce(sum(memory_usage_bytes) FILTER (WHERE tag = 'BASE_TABLE'), 0)::DOUBLE AS cached FROM duckdb_memory()`,
    )
  ).getRowObjectsJS() as { total: number; cached: number }[];
  return { total: Number(m?.total ?? 0), cached: Number(m?.cached ?? 0) };
}
