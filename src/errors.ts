/**
 * One error type for the whole tool, modelled on undici's `UND_ERR_*` codes and dlt's
 * terminal/transient split: a stable `code`, the `stage` it came from, context, a `cause`,
 * and whether running again can help.
 */
export type ErrorCode =
  | 'ETL_CONFIG_INVALID'
  | 'ETL_REQUEST_INVALID'
  | 'ETL_AUTH'
  | 'ETL_PAYMENT_REQUIRED'
  | 'ETL_RATE_LIMITED'
  | 'ETL_SERVICE_UNAVAILABLE'
  | 'ETL_SERVICE_ERROR'
  | 'ETL_OUTCOME_UNKNOWN'
  | 'ETL_WAREHOUSE'
  | 'ETL_WAREHOUSE_LOCKED'
  | 'ETL_WAREHOUSE_GONE'
  | 'ETL_TIMEOUT'
  | 'ETL_INTERRUPTED'
  | 'ETL_LAKE_CONFIG'
  | 'ETL_LAKE_REFUSED'
  | 'ETL_LAKE_UNREACHABLE'
  /** An answer cut short by this side (too long, or not whole in time): it counts as no answer (client/attempt.ts). */
  | 'ETL_ANSWER_CUT'
  /** A command line the CLI cannot take (an unknown option, a bad value). */
  | 'ETL_USAGE'
  | 'ETL_INTERNAL';

export interface ErrorContext {
  stage?: string;
  runId?: string;
  taskId?: string;
  requestId?: string;
  path?: string;
  [key: string]: unknown;
}

export class EtlError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly context: ErrorContext;

  /** Whether running again can help: the code's, from {@link ERROR_CODES}. */
  constructor(code: ErrorCode, message: string, opts: { context?: ErrorContext; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'EtlError';
    this.code = code;
    this.retryable = isRetryable(code);
    this.context = opts.context ?? {};
  }
}

/** A call not sent because the run was interrupted (Ctrl-C) while it waited for the rate limit. */
export function isInterrupted(err: unknown): err is EtlError {
  return err instanceof EtlError && err.code === 'ETL_INTERRUPTED';
}

/** One problem found in a pipeline file: where it is and which rule it breaks. */
export interface ConfigIssue {
  file: string;
  line: number;
  column: number;
  field: string;
  rule: string;
}

/** Every problem of a pipeline file at once, so the user fixes them in one pass. */
export class ConfigError extends EtlError {
  readonly issues: ConfigIssue[];

  /** `sent`: what reached the service before the problems were found (the preflight's free reference lists). */
  constructor(issues: ConfigIssue[], sent = 'nothing was sent to the service') {
    super('ETL_CONFIG_INVALID', formatIssues(issues, sent));
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

function formatIssues(issues: ConfigIssue[], sent: string): string {
  const lines = issues.map((i) => `  ${i.file}:${i.line}:${i.column}  ${i.field || '(file)'}: ${i.rule}`);
  const n = issues.length;
  return `pipeline file is invalid (${n} problem${n === 1 ? '' : 's'}); ${sent}:\n${lines.join('\n')}`;
}

/** Exit codes the CLI promises to scripts (documented in the README). */
export const ExitCode = {
  ok: 0,
  failure: 1,
  configInvalid: 2,
  partial: 3,
  budgetOrBalance: 4,
  serviceUnavailable: 5,
  auth: 6,
  /** Another process held the run's own `warehouse.duckdb` for longer than `PIPELINE_LOCK_WAIT_SECONDS`. */
  warehouseLocked: 7,
  /** `warehouse.duckdb` was deleted or replaced while the command had it open (its data copied to a rescue file when possible). */
  warehouseGone: 8,
  /**
   * A run bought, loaded and published here; only the lake is behind (its upload failed). The
   * next invocation (a run, a scheduled night, `pipeline lake sync`) syncs first, buying nothing.
   */
  lakeBehind: 9,
} as const;

/**
 * What a failed POST's outcome becomes (post-step.ts): `refused` created nothing and is safe to
 * post again; `unknown` may have created tasks (looked up by tag, never posted blindly).
 */
export type PostOutcome = 'refused' | 'unknown';

/** How posting stops after a failed POST with this code: the run ends (thrown), or the stop kind named. */
export type PostStop = 'end' | 'interrupted' | 'balance';

/** What one error code means: its exit code, whether running again can help, and what it does to a POST. */
export interface ErrorRule {
  exit: number;
  retryable: boolean;
  post: PostOutcome;
  /** How posting stops; absent: `unavailable` for a refused POST, `unknown` otherwise. */
  stop?: PostStop;
}

/** Every error code and its rules: the one place exit codes, retryability and POST outcomes are decided. */
export const ERROR_CODES: Readonly<Record<ErrorCode, ErrorRule>> = {
  ETL_CONFIG_INVALID: { exit: ExitCode.configInvalid, retryable: false, post: 'unknown' },
  ETL_REQUEST_INVALID: { exit: ExitCode.configInvalid, retryable: false, post: 'unknown', stop: 'end' },
  ETL_USAGE: { exit: ExitCode.configInvalid, retryable: false, post: 'unknown' },
  ETL_LAKE_CONFIG: { exit: ExitCode.configInvalid, retryable: false, post: 'unknown' },
  ETL_AUTH: { exit: ExitCode.auth, retryable: false, post: 'refused', stop: 'end' },
  ETL_LAKE_REFUSED: { exit: ExitCode.auth, retryable: false, post: 'unknown' },
  ETL_PAYMENT_REQUIRED: { exit: ExitCode.budgetOrBalance, retryable: false, post: 'refused', stop: 'balance' },
  ETL_SERVICE_UNAVAILABLE: { exit: ExitCode.serviceUnavailable, retryable: true, post: 'refused' },
  ETL_RATE_LIMITED: { exit: ExitCode.serviceUnavailable, retryable: true, post: 'refused' },
  ETL_TIMEOUT: { exit: ExitCode.serviceUnavailable, retryable: true, post: 'unknown' },
  ETL_LAKE_UNREACHABLE: { exit: ExitCode.serviceUnavailable, retryable: true, post: 'unknown' },
  ETL_OUTCOME_UNKNOWN: { exit: ExitCode.partial, retryable: false, post: 'unknown' },
  ETL_INTERRUPTED: { exit: ExitCode.partial, retryable: true, post: 'refused', stop: 'interrupted' },
  ETL_WAREHOUSE_LOCKED: { exit: ExitCode.warehouseLocked, retryable: true, post: 'unknown' },
  ETL_WAREHOUSE_GONE: { exit: ExitCode.warehouseGone, retryable: false, post: 'unknown' },
  ETL_SERVICE_ERROR: { exit: ExitCode.failure, retryable: false, post: 'unknown' },
  ETL_ANSWER_CUT: { exit: ExitCode.failure, retryable: true, post: 'unknown' },
  ETL_WAREHOUSE: { exit: ExitCode.failure, retryable: false, post: 'unknown' },
  ETL_INTERNAL: { exit: ExitCode.failure, retryable: false, post: 'unknown' },
};

/** The rules of a code (an unknown string, e.g. from an older journal, is an internal error). */
export function errorRule(code: string): ErrorRule {
  return ERROR_CODES[code as ErrorCode] ?? ERROR_CODES.ETL_INTERNAL;
}

/** Whether running again can help after an error with this code. */
export function isRetryable(code: ErrorCode): boolean {
  return errorRule(code).retryable;
}

/** The error code whose exit a run's stop kind takes (a run that stopped early, `RunSummary.stopKind`). */
const STOP_CODES: Record<StopKind, ErrorCode> = {
  budget: 'ETL_PAYMENT_REQUIRED',
  balance: 'ETL_PAYMENT_REQUIRED',
  unavailable: 'ETL_SERVICE_UNAVAILABLE',
  unknown: 'ETL_OUTCOME_UNKNOWN',
  interrupted: 'ETL_INTERRUPTED',
  // Posted tasks the service does not know (40401): lost for good, so "partial, run again" (3) would mislead.
  lost: 'ETL_INTERNAL',
};

/** Why a run stopped before it was done (`RunSummary.stopKind`). */
export type StopKind = 'budget' | 'balance' | 'unavailable' | 'unknown' | 'interrupted' | 'lost';

/** Maps an error to the exit code a calling script can act on. */
export function exitCodeFor(err: unknown): number {
  return err instanceof EtlError ? errorRule(err.code).exit : ExitCode.failure;
}

/**
 * The exit code of a run, for scripts: completed → 0; a completed run whose models failed to
 * build or test → 1 (the data is loaded); a completed run whose lake upload failed → 9: bought,
 * loaded and published here, only the lake is behind (the next invocation syncs first and buys
 * nothing). A run that stopped early exits as the error of its stop kind ({@link STOP_CODES}):
 * budget or balance → 4, service unreachable → 5, tasks lost by the service (40401) → 1,
 * otherwise 3. Pure.
 */
export function runExitCode(r: {
  state: string;
  stopKind: StopKind | null;
  models?: { ok: boolean } | undefined;
  lakeBehind?: boolean | undefined;
}): number {
  if (r.state === 'completed') {
    if (r.models && !r.models.ok) return ExitCode.failure;
    if (r.lakeBehind) return ExitCode.lakeBehind;
    return ExitCode.ok;
  }
  return r.stopKind === null ? ExitCode.partial : errorRule(STOP_CODES[r.stopKind]).exit;
}
