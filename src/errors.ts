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

  constructor(code: ErrorCode, message: string, opts: { retryable?: boolean; context?: ErrorContext; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'EtlError';
    this.code = code;
    this.retryable = opts.retryable ?? false;
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
    super('ETL_CONFIG_INVALID', formatIssues(issues, sent), { retryable: false });
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

/** Maps an error to the exit code a calling script can act on. */
export function exitCodeFor(err: unknown): number {
  if (!(err instanceof EtlError)) return ExitCode.failure;
  switch (err.code) {
    case 'ETL_CONFIG_INVALID':
    case 'ETL_REQUEST_INVALID':
    case 'ETL_LAKE_CONFIG':
      return ExitCode.configInvalid;
    case 'ETL_AUTH':
    case 'ETL_LAKE_REFUSED':
      return ExitCode.auth;
    case 'ETL_PAYMENT_REQUIRED':
      return ExitCode.budgetOrBalance;
    case 'ETL_SERVICE_UNAVAILABLE':
    case 'ETL_RATE_LIMITED':
    case 'ETL_TIMEOUT':
    case 'ETL_LAKE_UNREACHABLE':
      return ExitCode.serviceUnavailable;
    case 'ETL_OUTCOME_UNKNOWN':
    case 'ETL_INTERRUPTED':
      return ExitCode.partial;
    case 'ETL_WAREHOUSE_LOCKED':
      return ExitCode.warehouseLocked;
    case 'ETL_WAREHOUSE_GONE':
      return ExitCode.warehouseGone;
    default:
      return ExitCode.failure;
  }
}
