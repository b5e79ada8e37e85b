import { ExitCode } from '../errors.js';
import type { RunOutcome } from './run-pipeline.js';

/**
 * The exit code of a run, for scripts: completed → 0; budget or balance → 4; service
 * unreachable → 5; otherwise unfinished → 3; a completed run whose models failed to build
 * or test → 1 (the data is loaded). Pure.
 */
export function runExitCode(r: Pick<RunOutcome, 'state' | 'stopKind' | 'models'>): number {
  if (r.state === 'completed') return r.models && !r.models.ok ? ExitCode.failure : ExitCode.ok;
  if (r.stopKind === 'budget' || r.stopKind === 'balance') return ExitCode.budgetOrBalance;
  if (r.stopKind === 'unavailable') return ExitCode.serviceUnavailable;
  return ExitCode.partial;
}
