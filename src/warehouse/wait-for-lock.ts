import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { EtlError } from '../errors.js';

/** DuckDB's words when another process holds the file: "Could not set lock on file ... Conflicting lock is held in <program> (PID n)". */
const LOCKED = /Could not set lock on file|Conflicting lock is held/i;

/** Seconds to wait for a held warehouse file: `PIPELINE_LOCK_WAIT_SECONDS`, default 60. */
export function lockWaitSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.PIPELINE_LOCK_WAIT_SECONDS);
  return env.PIPELINE_LOCK_WAIT_SECONDS !== undefined && Number.isFinite(n) && n >= 0 ? n : 60;
}

/** Who holds the file, from DuckDB's message ("/usr/bin/python3 (PID 4242)"), when it says. */
export function lockHolder(message: string): string | undefined {
  return /Conflicting lock is held in (.+?\(PID \d+\))/.exec(message)?.[1];
}

/** A process's command line (Linux `/proc/<pid>/cmdline`); undefined where it cannot be read. */
function procCmdline(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return undefined;
  }
}

/**
 * The holder as a person should read it: when it is this tool (`node …/bin/pipeline.mjs run
 * keywords.yaml`), the pipeline command it runs (its first 120 characters), so that "close that
 * process" is not said of a nightly run; else DuckDB's words.
 */
export function describeHolder(message: string, cmdline: (pid: number) => string[] | undefined = procCmdline): { who: string; pipeline: boolean } {
  const holder = lockHolder(message);
  const pid = Number(/\(PID (\d+)\)/.exec(holder ?? '')?.[1]);
  const argv = Number.isInteger(pid) && pid > 0 ? cmdline(pid) : undefined;
  const at = argv?.findIndex((a) => /(^|\/)(bin\/pipeline\.mjs|bin\.ts|pipeline)$/.test(a)) ?? -1;
  if (argv && at >= 0) {
    const command = ['pipeline', ...argv.slice(at + 1)].join(' ');
    return { who: `\`${command.length > 120 ? `${command.slice(0, 117)}...` : command}\` (PID ${pid})`, pipeline: true };
  }
  return { who: holder ?? 'another process', pipeline: false };
}

/**
 * Opens the run's DuckDB file, and while another process holds it (a notebook that opened
 * `warehouse.duckdb` instead of `serving.duckdb`, a second run), says who and tries again
 * every second for `PIPELINE_LOCK_WAIT_SECONDS`; then fails with `ETL_WAREHOUSE_LOCKED`
 * (exit code 7). Any other error is thrown at once.
 */
export async function openWaiting<T>(open: () => Promise<T>, o: { file: string; onWait?: ((message: string) => void) | undefined; waitSeconds?: number; pollMs?: number }): Promise<T> {
  const waitMs = (o.waitSeconds ?? lockWaitSeconds()) * 1000;
  const pollMs = o.pollMs ?? 1000;
  const started = Date.now();
  const say = o.onWait ?? ((m: string) => process.stderr.write(`${m}\n`));
  let told = false;
  for (;;) {
    try {
      return await open();
    } catch (err) {
      const message = (err as Error).message;
      if (!LOCKED.test(message)) throw err;
      const { who: holder, pipeline } = describeHolder(message);
      const waited = Date.now() - started;
      if (waited >= waitMs) {
        const then = pipeline
          ? 'Wait for it to finish, then run again (or raise PIPELINE_LOCK_WAIT_SECONDS to wait longer); meanwhile serving.duckdb and the Parquet under parquet/ hold what the last run published'
          : "The run's own DuckDB file is private to runs: readers open serving.duckdb or the Parquet under parquet/. Close that process and run again";
        throw new EtlError(
          'ETL_WAREHOUSE_LOCKED',
          `${o.file} is held by ${holder}; waited ${Math.round(waited / 1000)} s (PIPELINE_LOCK_WAIT_SECONDS). ${then} (nothing was sent to the service).`,
          { cause: err, context: { stage: 'warehouse', holder } },
        );
      }
      if (!told) say(`${o.file} is held by ${holder}; waiting up to ${Math.round(waitMs / 1000)} s for it (PIPELINE_LOCK_WAIT_SECONDS)`);
      told = true;
      await delay(Math.min(pollMs, Math.max(0, waitMs - waited)));
    }
  }
}
