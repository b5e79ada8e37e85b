import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { EtlError } from '../errors.js';

/**
 * The identity (device and inode) of `warehouse.duckdb` as it was opened, checked before each
 * transaction and before the warehouse closes: a file deleted, or replaced by another (a
 * rename onto its name, a restore from backup) while a process writes to it is noticed. DuckDB
 * keeps writing to the file it opened, which no longer has a name and is gone when the process
 * ends: on noticing, what that file holds is copied to `warehouse.rescued-<time>.duckdb` beside
 * it (DuckDB's `COPY FROM DATABASE`), and every later check throws the same error.
 */
export class FileGuard {
  #failed: EtlError | undefined;
  #rescuing: Promise<EtlError> | undefined;

  private constructor(
    readonly path: string,
    private readonly dev: bigint,
    private readonly ino: bigint,
  ) {}

  /** The identity of the file at `path` now (just opened). */
  static of(path: string): FileGuard {
    const s = statSync(path, { bigint: true });
    return new FileGuard(path, s.dev, s.ino);
  }

  /** What happened to the file, or undefined when it is still the one opened. */
  #change(): 'deleted' | 'replaced' | undefined {
    try {
      const s = statSync(this.path, { bigint: true });
      return s.dev === this.dev && s.ino === this.ino ? undefined : 'replaced';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return 'deleted';
      throw err;
    }
  }

  /**
   * Throws `ETL_WAREHOUSE_GONE` when the file is no longer the one opened, after copying the
   * open database to a rescue file (once). Cheap when nothing changed: one `stat`.
   */
  async check(instance: DuckDBInstance): Promise<void> {
    if (this.#failed) throw this.#failed;
    const change = this.#change();
    if (!change) return;
    this.#rescuing ??= this.#rescue(instance, change);
    this.#failed = await this.#rescuing;
    throw this.#failed;
  }

  async #rescue(instance: DuckDBInstance, change: 'deleted' | 'replaced'): Promise<EtlError> {
    const dir = dirname(this.path);
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    const rescued = join(dir, `${basename(this.path, '.duckdb')}.rescued-${stamp}.duckdb`);
    const what =
      change === 'deleted'
        ? `${this.path} was deleted while this process had it open`
        : `${this.path} was replaced by another file (renamed or copied onto its name) while this process had it open`;
    let saved: string;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const c = await instance.connect();
      try {
        const name = String((await (await c.runAndReadAll('SELECT current_database() AS d')).getRowObjects())[0]?.d);
        await c.run(`ATTACH '${rescued.replaceAll("'", "''")}' AS pipeline_rescue`);
        try {
          await c.run(`COPY FROM DATABASE "${name.replaceAll('"', '""')}" TO pipeline_rescue`);
        } finally {
          await c.run('DETACH pipeline_rescue');
        }
      } finally {
        c.closeSync();
      }
      chmodSync(rescued, 0o600); // the ledger and the raw index: the user's alone, as warehouse.duckdb is
      saved =
        `Everything it held (runs, tasks, ledger, loaded rows; this run's up to now) was copied to ${rescued}. ` +
        `To keep it: stop what else uses the warehouse, ${change === 'replaced' ? `move the file now named ${basename(this.path)} aside` : `move aside any new ${basename(this.path)}`}, ` +
        `rename ${basename(rescued)} to ${basename(this.path)}, and run again (an unfinished run resumes; nothing it bought is bought again).`;
    } catch (err) {
      saved =
        `Copying what it held to ${rescued} failed (${(err as Error).message}): the runs, tasks and ledger rows written since it was opened are lost with it. ` +
        "The bodies the service sent are still under raw/ ('pipeline replay' rebuilds the result tables from them; the ledger rows of those calls are lost).";
    }
    return new EtlError(
      'ETL_WAREHOUSE_GONE',
      `${what}; its writes went to a file without a name, gone when the process ends. The run stopped here. ${saved}`,
      { context: { stage: 'warehouse', path: this.path } },
    );
  }
}
