import { describe, expect, it } from 'vitest';
import { runExitCode } from '../../../src/run/exit-code.js';
import { failedOutcome, stopFor } from '../../../src/post/post-step.js';
import { EtlError } from '../../../src/errors.js';

const models = (ok: boolean) => ({
  built: 1,
  failed: ok ? 0 : 1,
  tests: 1,
  testsPassed: ok ? 1 : 0,
  warned: 0,
  warnings: '',
  ok,
  report: '',
  slowest: [],
});

describe('run outcome policy (pure)', () => {
  it('maps a run outcome to the documented exit codes', () => {
    expect(runExitCode({ state: 'completed', stopKind: null })).toBe(0);
    expect(runExitCode({ state: 'completed', stopKind: null, models: models(true) })).toBe(0);
    expect(runExitCode({ state: 'completed', stopKind: null, models: models(false) })).toBe(1);
    // Bought, loaded and published here; only the lake is behind: its own code, not 5 ("run again later").
    expect(runExitCode({ state: 'completed', stopKind: null, lakeBehind: true })).toBe(9);
    expect(runExitCode({ state: 'completed', stopKind: null, models: models(false), lakeBehind: true })).toBe(1);
    expect(runExitCode({ state: 'partial', stopKind: 'budget' })).toBe(4);
    expect(runExitCode({ state: 'partial', stopKind: 'balance' })).toBe(4);
    expect(runExitCode({ state: 'partial', stopKind: 'unavailable' })).toBe(5);
    expect(runExitCode({ state: 'partial', stopKind: 'unknown' })).toBe(3);
    expect(runExitCode({ state: 'partial', stopKind: 'interrupted' })).toBe(3);
    // Posted tasks the service no longer knows (40401): running again cannot bring them back, so not 3.
    expect(runExitCode({ state: 'partial', stopKind: 'lost' })).toBe(1);
  });

  it('a failed POST is refused (safe to post again) or unknown (looked up), and stops posting with its kind', () => {
    const refused = failedOutcome(new EtlError('ETL_SERVICE_UNAVAILABLE', 'no connection'));
    expect(refused.kind).toBe('refused');
    expect(stopFor(refused)).toEqual({ kind: 'unavailable', reason: 'no connection' });
    const paid = failedOutcome(new EtlError('ETL_PAYMENT_REQUIRED', 'balance'));
    expect(stopFor(paid).kind).toBe('balance');
    const lost = failedOutcome(new EtlError('ETL_TIMEOUT', 'no answer'));
    expect(lost.kind).toBe('unknown');
    expect(stopFor(lost).kind).toBe('unknown');
    expect(() => stopFor(failedOutcome(new EtlError('ETL_AUTH', 'key refused')))).toThrow('key refused');
    expect(() => failedOutcome(new TypeError('a bug'))).toThrow('a bug');
  });
});
