import { ExitCode } from '../errors.js';
import type { RunOutcome } from './run-pipeline.js';

/**
 * The exit code of a run, for scripts: completed → 0; budget or balance → 4; service
 * unreachable → 5; tasks lost by the service (40401) → 1; otherwise unfinished → 3; a completed run whose models failed to build
 * or test → 1 (the data is loaded); a lake upload that failed → 5 when the store did not answer,
 * else 1. Pure.
 */
export function runExitCode(r: Pick<RunOutcome, 'state' | 'stopKind' | 'models' | 'lake'>): number {
  if (r.state === 'completed') {
    if (r.models && !r.models.ok) return ExitCode.failure;
    // A lake that could not take the files: 5 when it did not answer, 1 otherwise; the next run finishes the upload.
    const lakeCodes = !r.lake ? [] : 'error' in r.lake ? [r.lake.code] : r.lake.failed.map((f) => f.code);
    if (lakeCodes.length) return lakeCodes.includes('ETL_LAKE_UNREACHABLE') ? ExitCode.serviceUnavailable : ExitCode.failure;
    return ExitCode.ok;
  }
  if (r.stopKind === 'budget' || r.stopKind === 'balance') return ExitCode.budgetOrBalance;
  if (r.stopKind === 'unavailable') return ExitCode.serviceUnavailable;
  // Posted tasks the service does not know (40401): lost for good, so "partial, run again" (3) would mislead.
  if (r.stopKind === 'lost') return ExitCode.failure;
  return ExitCode.partial;
}
