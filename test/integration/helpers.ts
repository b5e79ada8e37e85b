import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Agent, type Dispatcher } from 'undici';
import { fromMicros, toMicros } from '../../src/run/money.js';

/** A fresh warehouse folder per test, removed afterwards. */
export async function tempDir(prefix = 'pipeline-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const silentLogger = pino({ level: 'silent' });

/** Sums decimal strings exactly, as finance would (the tool's own money helpers). */
export function sumDecimals(values: readonly string[]): string {
  return fromMicros(values.reduce((a, v) => a + toMicros(v), 0n));
}

/** A clock on a fixed UTC day that still moves, so task lifecycles progress. */
export function movingClock(startIso: string): () => Date {
  const start = Date.parse(startIso);
  const t0 = Date.now();
  return () => new Date(start + (Date.now() - t0));
}

/** A dispatcher whose every request gives up after `ms` without an answer (a client timeout shorter than the default 60 s). */
export class ShortTimeouts extends Agent {
  constructor(private readonly ms: number) {
    super();
  }
  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return super.dispatch({ ...opts, headersTimeout: this.ms, bodyTimeout: this.ms }, handler);
  }
}
