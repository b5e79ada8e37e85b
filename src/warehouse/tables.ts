import { alertsTable } from './alerts-table.js';
import type { TableSpec } from './columns.js';
import { RUN_STATES, TASK_STATES } from './state/lifecycle.js';
import { trackedDomainsTable } from './tracked-domains.js';

/** One row per `pipeline run` invocation. */
export const runsTable: TableSpec = {
  name: 'runs',
  grain: 'one row per run',
  partitionBy: 'started_at',
  columns: [
    { name: 'run_id', kind: 'varchar', key: true },
    { name: 'pipeline', kind: 'varchar' },
    { name: 'pipeline_file', kind: 'varchar' },
    { name: 'base_url', kind: 'varchar' },
    { name: 'key_kind', kind: 'varchar', doc: 'live or sandbox; the key itself is never stored' },
    { name: 'state', kind: 'varchar', doc: `${RUN_STATES.join(', ')} (docs/lifecycle.md)` },
    { name: 'stop_reason', kind: 'varchar' },
    { name: 'started_at', kind: 'timestamptz' },
    { name: 'finished_at', kind: 'timestamptz' },
    {
      name: 'planned_tasks',
      kind: 'int',
      doc: "the tasks of the run's plan, recorded when it is planned (the tasks table holds only the batches a run stopped early reached)",
    },
  ],
};

/**
 * The run's journal: one row per step of a run (ingest, clusters, models, alerts, publish,
 * summary, checkpoint, lake), written when the step starts and completed when it is done (or
 * skipped). A run is finished when its last step (`lake`) is done: until then the next
 * invocation (a run, a scheduled night, `lake sync`) does the steps it still owes, buying
 * nothing (src/run/run-pipeline.ts). Working state of the runs: not published.
 */
export const runStepsTable: TableSpec = {
  name: 'run_steps',
  grain: 'one row per run and step',
  columns: [
    { name: 'run_id', kind: 'varchar', key: true },
    { name: 'step', kind: 'varchar', key: true, doc: 'ingest, clusters, models, alerts, publish, summary, checkpoint or lake' },
    { name: 'started_at', kind: 'timestamptz', doc: 'when the step last started' },
    { name: 'done_at', kind: 'timestamptz', doc: 'when it was done (or skipped); null while it is owed' },
    { name: 'detail', kind: 'varchar', doc: "'skipped' with why, or the lake address of the lake step (which a later invocation syncs to)" },
  ],
};

/** One row per task spec of a run, written before its batch is posted. */
export const tasksTable: TableSpec = {
  name: 'tasks',
  grain: 'one row per planned task (tag)',
  partitionBy: 'planned_at',
  columns: [
    { name: 'tag', kind: 'varchar', key: true, doc: 'deterministic hash of pipeline, run and task spec; echoed by the service' },
    { name: 'run_id', kind: 'varchar', key: true },
    { name: 'pipeline', kind: 'varchar' },
    { name: 'job', kind: 'varchar' },
    { name: 'endpoint_id', kind: 'varchar' },
    { name: 'batch_no', kind: 'int' },
    { name: 'spec', kind: 'json', doc: 'the task as posted' },
    { name: 'state', kind: 'varchar', doc: `${TASK_STATES.join(', ')} (docs/lifecycle.md)` },
    { name: 'task_id', kind: 'varchar' },
    {
      name: 'status_code',
      kind: 'int',
      doc: "the task's status_code in its POST's answer (20100: created), kept once it is collected (state says so: a collected task's result was 20000); the service's code for a task it refused, or that failed at collection",
    },
    { name: 'status_message', kind: 'varchar', doc: "the message that goes with status_code, or why the run left the task where it is (a POST that failed, a look-up by tag)" },
    { name: 'planned_at', kind: 'timestamptz' },
    { name: 'posted_at', kind: 'timestamptz' },
    { name: 'collected_at', kind: 'timestamptz' },
    { name: 'rows_loaded', kind: 'int' },
    { name: 'cost_usd', kind: 'decimal', doc: "the task's raw USD `cost` when created (the POST's answer, or id_list's); a refund is measured against it" },
    {
      name: 'post_call_id',
      kind: 'varchar',
      doc: 'ledger call_id of the POST that created it (set before each attempt is sent): its CNY/USD ratio prices a refund, and its row is priced from id_list when its answer never came',
    },
    {
      name: 'depth_reason',
      kind: 'varchar',
      doc: 'why a `depth: auto` task bought its depth: auto:seen, auto:shallow, auto:sweep or auto:escalation (src/plan/auto-depth.ts); null for a fixed depth',
    },
  ],
};

/** One row per job of a run: what the pipeline file asked for, for BI filters and audits. */
export const runJobsTable: TableSpec = {
  name: 'run_jobs',
  grain: 'one row per run and job',
  columns: [
    { name: 'run_id', kind: 'varchar', key: true },
    { name: 'job', kind: 'varchar', key: true, doc: 'the job name; tasks.job refers to it' },
    { name: 'pipeline', kind: 'varchar' },
    { name: 'kind', kind: 'varchar', doc: 'job kind (serp, search_volume, labs, endpoint, ...)' },
    { name: 'mode', kind: 'varchar', doc: 'standard or live; null for embeddings' },
    { name: 'labels', kind: 'json', doc: 'the job labels of the pipeline file (a JSON array of strings)' },
    { name: 'settings', kind: 'json', doc: 'the job as resolved (defaults filled); a list of more than 20 values (keywords, targets) is replaced by {"count": n}' },
  ],
};

/**
 * One row per re-parse of one of our tasks that `tasks_fixed` listed: written before the
 * task is fetched again, completed in the transaction that replaces its rows, so a fetch
 * interrupted by a crash is finished by the next run and a re-parse is fetched only once.
 */
export const taskRefetchesTable: TableSpec = {
  name: 'task_refetches',
  grain: 'one row per task and re-parse (date_fixed)',
  partitionBy: 'listed_at',
  columns: [
    { name: 'task_id', kind: 'varchar', key: true },
    { name: 'date_fixed', kind: 'varchar', key: true, doc: 'date_fixed as tasks_fixed listed it (service UTC), or `raw damaged <time>` for a collected task whose landed answer was found damaged (docs/warehouse.md)' },
    { name: 'endpoint_id', kind: 'varchar', doc: 'the task_post endpoint of the task' },
    { name: 'listed_at', kind: 'timestamptz', doc: 'when a run saw it in tasks_fixed' },
    { name: 'run_id', kind: 'varchar', doc: 'the run that fetched it again (its raw body and ledger row carry this run)' },
    { name: 'refetched_at', kind: 'timestamptz', doc: 'when its new rows replaced the old ones; null while still to fetch' },
    { name: 'status_code', kind: 'int', doc: 'task status_code of the new fetch (20000, or the error that ended the attempt)' },
    { name: 'rows_loaded', kind: 'int', doc: 'rows the new result loaded' },
  ],
};

/**
 * One row per HTTP call, free calls included, and one per refund: the finance record.
 * `sum(charge_cny)` is the net spend; `sum(refund_cny)` what came back.
 */
export const ledgerTable: TableSpec = {
  name: 'ledger',
  grain: 'one row per HTTP call, and one per refunded task (call_id refund:<task_id>)',
  partitionBy: 'called_at',
  columns: [
    { name: 'call_id', kind: 'varchar', key: true },
    { name: 'run_id', kind: 'varchar' },
    { name: 'pipeline', kind: 'varchar' },
    { name: 'endpoint_id', kind: 'varchar' },
    { name: 'method', kind: 'varchar' },
    { name: 'path', kind: 'varchar' },
    { name: 'http_status', kind: 'int', doc: 'null for a charged POST whose answer has not been landed: its row is written before it is sent, so one whose answer never arrived (a timeout, a dropped connection, the process killed while it was out) keeps it; the service may have charged it' },
    { name: 'request_id', kind: 'varchar', doc: 'X-Svc-Request-ID' },
    {
      name: 'charge_cny',
      kind: 'decimal',
      doc: 'X-Svc-Charge-CNY: the amount charged; negative on a refund row (and for a negative header); null when the header was absent or the answer never arrived, until estimated (charge_estimated)',
    },
    { name: 'refund_cny', kind: 'decimal', doc: 'amount given back to the balance (unused depth): the refund of a refund row, 0 on a call' },
    { name: 'cost_usd', kind: 'decimal', doc: "X-Svc-Cost-USD: raw cost, for reference only (a refund row: the USD cost given back, negative; a POST whose answer never arrived: id_list's costs of the tasks it created, once looked up)" },
    { name: 'balance_cny', kind: 'decimal', doc: 'X-Svc-Balance-CNY after the call' },
    { name: 'tasks', kind: 'int', doc: 'tasks sent in the body (0 on a refund row)' },
    { name: 'called_at', kind: 'timestamptz', doc: 'when the call was answered (a call whose answer never arrived: when it was sent); a refund row: when the refund was seen (the net cost collected)' },
    { name: 'task_id', kind: 'varchar', doc: 'the refunded task on a refund row (method REFUND); null on a call' },
    {
      name: 'charge_estimated',
      kind: 'bool',
      doc: "true when no header gave charge_cny: a POST whose answer never arrived, priced from the USD cost id_list lists for the tasks it created, at the CNY/USD ratio of the endpoint's answered calls; false otherwise (null on rows written before this column)",
    },
  ],
};

/** Index of landed raw bodies: where each response is on disk. */
export const rawResponsesTable: TableSpec = {
  name: 'raw_responses',
  grain: 'one row per landed response body',
  partitionBy: 'received_at',
  columns: [
    { name: 'call_id', kind: 'varchar', key: true },
    { name: 'run_id', kind: 'varchar' },
    { name: 'endpoint_id', kind: 'varchar' },
    { name: 'path', kind: 'varchar' },
    { name: 'http_status', kind: 'int' },
    { name: 'request_id', kind: 'varchar' },
    { name: 'file', kind: 'varchar', doc: 'path under the warehouse folder of the gzip NDJSON file' },
    { name: 'bytes', kind: 'bigint', doc: 'size of its gzip member' },
    { name: 'received_at', kind: 'timestamptz' },
    { name: 'kind', kind: 'varchar', doc: 'result kind: the set of tables its rows go to' },
    { name: 'parsed', kind: 'bool', doc: 'false when the body is not JSON (kept as received in the body field)' },
    { name: 'task_ids', kind: 'varchar[]', doc: 'ids of the tasks that succeeded in this response' },
    { name: 'shape', kind: 'varchar[]', doc: 'every path:type of the body, so loads know new fields and type clashes' },
    { name: 'byte_offset', kind: 'bigint', doc: 'offset of its gzip member in file (responses landed together share a file)' },
    {
      name: 'request_hash',
      kind: 'varchar',
      doc: 'SHA-256 of what was asked (key kind, method, address, body sent): a paid answer is found again by it, not bought twice; null for a call without a body',
    },
  ],
};

/**
 * What a load reads instead of parsing a landed body a second time (load-landed.ts): the body
 * without its lists of objects at `tasks[].result[].<key>` (a SERP's items), which the
 * result-level tables (`serp_results`) do not read. The landing writes it with the index row
 * (raw-landing.ts `headOf`); a reindex does not, and a load then reads the files. Working
 * state: not published.
 */
export const rawHeadsTable: TableSpec = {
  name: 'raw_heads',
  grain: 'one row per landed /v3 answer whose results hold lists of objects',
  columns: [
    { name: 'call_id', kind: 'varchar', key: true },
    { name: 'run_id', kind: 'varchar' },
    { name: 'received_at', kind: 'timestamptz' },
    { name: 'head', kind: 'varchar', doc: 'the body as landed, without the lists of objects of each result (JSON text)' },
  ],
};

/**
 * The columns of every data table with where each value comes from in the body: the
 * declared ones and every column the generic normalizer added. This is what lets the
 * warehouse read new bodies with explicit types and rebuild tables from the raw landing.
 */
export const schemaColumnsTable: TableSpec = {
  name: 'schema_columns',
  grain: 'one row per column of a data table',
  columns: [
    { name: 'table_name', kind: 'varchar', key: true },
    { name: 'column_name', kind: 'varchar', key: true },
    { name: 'position', kind: 'int' },
    { name: 'kind', kind: 'varchar', doc: 'column kind (varchar, bigint, double, json, ...)' },
    { name: 'path', kind: 'varchar', doc: 'source path relative to the row, or $.-absolute' },
    { name: 'variant_of', kind: 'varchar', doc: 'for a variant column: the column whose values of another type it holds' },
    { name: 'declared', kind: 'bool' },
    { name: 'result_kind', kind: 'varchar', doc: 'the result kind whose bodies fill the table' },
    { name: 'rows', kind: 'varchar', doc: 'the list of the body whose elements are the rows' },
    { name: 'spec', kind: 'json', doc: 'the table and column description the loader reads back' },
  ],
};

/**
 * The service's free reference lists that job preflights read (SERP locations and languages, AI
 * keyword data places, LLM models, lighthouse versions), kept for a week (src/run/preflight.ts).
 * Working state of the runs: not published.
 */
export const referenceListsTable: TableSpec = {
  name: 'reference_lists',
  grain: 'one row per reference list (the newest read)',
  columns: [
    { name: 'endpoint_id', kind: 'varchar', key: true, doc: "the list's endpoint, e.g. serp.engA.locations" },
    { name: 'fetched_at', kind: 'timestamptz', doc: 'when the run read it; a run reads it again a week later' },
    { name: 'items', kind: 'json', doc: "the list's result items as the service sent them" },
  ],
};

/**
 * What the models stage asks the publish to write besides the declared tables: each mart
 * (from its sidecar) and the clustering step's tables, replaced whole at each models build,
 * so a new mart is published without an edit here. Not published itself.
 */
export const publishedRelationsTable: TableSpec = {
  name: 'published_relations',
  grain: 'one row per model or clustering table to publish',
  columns: [
    { name: 'name', kind: 'varchar', key: true, doc: 'the relation, as the models stage names it' },
    { name: 'partition_by', kind: 'varchar', doc: "the date column its Parquet is partitioned by (`date=` its UTC day); null: one file set, under the run's date" },
    { name: 'incremental', kind: 'bool', doc: 'rebuilt from its last built day on: only partitions from the last published one on can change' },
  ],
};

/** Working state of the runs that readers have no use for: neither published nor exported. */
export const UNPUBLISHED_TABLES: ReadonlySet<string> = new Set(['reference_lists', 'raw_heads', 'run_steps', 'published_relations']);

export const ALL_TABLES: readonly TableSpec[] = [
  runsTable,
  runStepsTable,
  tasksTable,
  runJobsTable,
  taskRefetchesTable,
  ledgerTable,
  rawResponsesTable,
  rawHeadsTable,
  schemaColumnsTable,
  trackedDomainsTable,
  alertsTable,
  referenceListsTable,
  publishedRelationsTable,
];
