import { ExitCode } from '../errors.js';
import type { RunOutcome } from './run-pipeline.js';

/**
 * The exit code of a run, for scripts: completed → 0; budget or balance → 4; service
 * unreachable → 5; tasks lost by the service (40401) → 1; otherwise unfinished → 3; a completed
 * run whose models failed to build or test → 1 (the data is loaded); a completed run whose lake
 * upload failed → 9: bought, loaded and published here, only the lake is behind (the next
 * invocation syncs first and buys nothing). Pure.
 */
export function runExitCode(r: Pick<RunOutcome, 'state' | 'stopKind' | 'models' | 'lakeBehind'>): number {
  if (r.state === 'completed') {
    if (r.models && !r.models.ok) return ExitCode.failure;
    if (r.lakeBehind) return ExitCode.lakeBehind;
    return ExitCode.ok;
  }
  if (r.stopKind === 'budget' || r.stopKind === 'balance') return ExitCode.budgetOrBalance;
  if (r.stopKind === 'unavailable') return ExitCode.serviceUnavailable;
  // Posted tasks the service does not know (40401): lost for good, so "partial, run again" (3) would mislead.
  if (r.stopKind === 'lost') return ExitCode.failure;
  return ExitCode.partial;
}
