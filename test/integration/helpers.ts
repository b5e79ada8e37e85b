import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';

/** A fresh warehouse folder per test, removed afterwards. */
export async function tempDir(prefix = 'pipeline-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const silentLogger = pino({ level: 'silent' });

/** Sums decimal strings exactly (units of 1e-6), as finance would. */
export function sumDecimals(values: readonly string[]): string {
  let micros = 0n;
  for (const v of values) {
    const [int, frac = ''] = v.replace('-', '').split('.');
    const m = BigInt(int!) * 1_000_000n + BigInt((frac + '000000').slice(0, 6));
    micros += v.startsWith('-') ? -m : m;
  }
  const neg = micros < 0n;
  const abs = neg ? -micros : micros;
  return `${neg ? '-' : ''}${abs / 1_000_000n}.${String(abs % 1_000_000n).padStart(6, '0')}`;
}

/** A clock on a fixed UTC day that still moves, so task lifecycles progress. */
export function movingClock(startIso: string): () => Date {
  const start = Date.parse(startIso);
  const t0 = Date.now();
  return () => new Date(start + (Date.now() - t0));
}
