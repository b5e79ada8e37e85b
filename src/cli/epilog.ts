import { ExitCode } from '../errors.js';

/** The environment and the exit codes, at the end of `pipeline --help` and `pipeline run --help`. */
export const EPILOG = `Environment:
  SVC_API_KEY      svc_live_... or svc_sandbox_... key; unset = built-in sandbox emulator
  SVC_BASE_URL     base address of the service (required with a key)
  SVC_SANDBOX_URL  base address for svc_sandbox_ keys (defaults to SVC_BASE_URL)
  LOG_LEVEL        pino log level on stderr (default warn; the scheduler: info)
  LOG_FORMAT       json or pretty (default: pretty on a terminal, JSON otherwise)
  PIPELINE_DUCKDB_MEMORY  DuckDB memory limit (default 4GB)
  PIPELINE_DUCKDB_THREADS  DuckDB's worker threads (default: one a core)
  PIPELINE_CHECKPOINT_MB  loaded rows DuckDB may hold uncheckpointed before the loader checkpoints (default 128; 0: at the run's end only)
  PIPELINE_LIVE_CONCURRENCY  live calls in flight at once (default 4; the rate limits still apply)
  PIPELINE_LAKE    s3://bucket/prefix the published layout is mirrored to (docs/lake.md); with it:
  AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3) for a store other than AWS S3, AWS_REGION,
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or AWS_PROFILE
  PIPELINE_LOCK_WAIT_SECONDS  how long to wait for warehouse.duckdb held by another process (default 60), then exit ${ExitCode.warehouseLocked}
  PIPELINE_PUBLISH_COMPACT_FILES  files a Parquet partition may hold before it is compacted into one (default 8)
  PIPELINE_SERVING_KEEP_HOURS  how long files of older serving.duckdb snapshots stay for readers still holding one (default 24)
  PIPELINE_SANDBOX_DATE  start the built-in sandbox's clock at this date (YYYY-MM-DD or an ISO instant)
  PIPELINE_SANDBOX_READY_AFTER  seconds until a task posted to the built-in sandbox is done (default 0.3)

Exit codes:
  ${ExitCode.ok} done   ${ExitCode.configInvalid} invalid pipeline or request, or a path that cannot be used (nothing was sent)
  ${ExitCode.failure} an unexpected error, or the data is loaded but the models failed to build or test,
    or posted tasks the service no longer knows (40401: their results are lost)
  ${ExitCode.partial} partial, run again to resume   ${ExitCode.budgetOrBalance} stopped at the budget or balance
  ${ExitCode.serviceUnavailable} service or lake unavailable   ${ExitCode.auth} API key or lake credentials refused
  ${ExitCode.warehouseLocked} warehouse.duckdb held by another process past PIPELINE_LOCK_WAIT_SECONDS (readers: open serving.duckdb)
  ${ExitCode.warehouseGone} warehouse.duckdb deleted or replaced while in use (what it held is copied to warehouse.rescued-*.duckdb)
  ${ExitCode.lakeBehind} bought, loaded and published here; only the lake is behind (the next run or 'pipeline lake sync' syncs first, buying nothing)
  130 a second Ctrl-C: stopped at once, the next run resumes`;
