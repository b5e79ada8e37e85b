import type { TableSpec } from './columns.js';

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
    { name: 'state', kind: 'varchar', doc: 'running, completed, partial, failed' },
    { name: 'stop_reason', kind: 'varchar' },
    { name: 'started_at', kind: 'timestamptz' },
    { name: 'finished_at', kind: 'timestamptz' },
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
    { name: 'state', kind: 'varchar', doc: 'planned, posted, failed, collected' },
    { name: 'task_id', kind: 'varchar' },
    { name: 'status_code', kind: 'int' },
    { name: 'status_message', kind: 'varchar' },
    { name: 'planned_at', kind: 'timestamptz' },
    { name: 'posted_at', kind: 'timestamptz' },
    { name: 'collected_at', kind: 'timestamptz' },
    { name: 'rows_loaded', kind: 'int' },
  ],
};

/** One row per HTTP call, free calls included: the finance record. */
export const ledgerTable: TableSpec = {
  name: 'ledger',
  grain: 'one row per HTTP call',
  partitionBy: 'called_at',
  columns: [
    { name: 'call_id', kind: 'varchar', key: true },
    { name: 'run_id', kind: 'varchar' },
    { name: 'pipeline', kind: 'varchar' },
    { name: 'endpoint_id', kind: 'varchar' },
    { name: 'method', kind: 'varchar' },
    { name: 'path', kind: 'varchar' },
    { name: 'http_status', kind: 'int' },
    { name: 'request_id', kind: 'varchar', doc: 'X-Svc-Request-ID' },
    { name: 'charge_cny', kind: 'decimal', doc: 'X-Svc-Charge-CNY: the amount charged; null when the header was absent' },
    { name: 'cost_usd', kind: 'decimal', doc: 'X-Svc-Cost-USD: raw cost, for reference only' },
    { name: 'balance_cny', kind: 'decimal', doc: 'X-Svc-Balance-CNY after the call' },
    { name: 'tasks', kind: 'int', doc: 'tasks sent in the body' },
    { name: 'called_at', kind: 'timestamptz' },
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
    { name: 'bytes', kind: 'bigint' },
    { name: 'received_at', kind: 'timestamptz' },
  ],
};

/** One row per collected SERP task result (a page of one keyword at one check). */
export const serpResultsTable: TableSpec = {
  name: 'serp_results',
  grain: 'one row per SERP task result',
  partitionBy: 'check_date',
  replaceKey: 'task_id',
  columns: [
    { name: 'task_id', kind: 'varchar', key: true },
    { name: 'result_index', kind: 'int', key: true },
    { name: 'tag', kind: 'varchar' },
    { name: 'run_id', kind: 'varchar' },
    { name: 'se', kind: 'varchar' },
    { name: 'se_type', kind: 'varchar' },
    { name: 'keyword', kind: 'varchar' },
    { name: 'location_code', kind: 'int' },
    { name: 'language_code', kind: 'varchar' },
    { name: 'device', kind: 'varchar' },
    { name: 'os', kind: 'varchar' },
    { name: 'se_domain', kind: 'varchar' },
    { name: 'check_url', kind: 'varchar' },
    { name: 'checked_at', kind: 'timestamptz' },
    { name: 'check_date', kind: 'date' },
    { name: 'se_results_count', kind: 'bigint' },
    { name: 'items_count', kind: 'int' },
    { name: 'item_types', kind: 'varchar[]' },
    { name: 'spell', kind: 'json' },
    { name: 'extra', kind: 'json', doc: 'every other field of the result, so nothing is dropped' },
  ],
};

/** One row per item of a SERP page (organic, featured snippet, people also ask ...). */
export const serpItemsTable: TableSpec = {
  name: 'serp_items',
  grain: 'one row per SERP item (task, result, item index)',
  partitionBy: 'check_date',
  replaceKey: 'task_id',
  columns: [
    { name: 'task_id', kind: 'varchar', key: true },
    { name: 'result_index', kind: 'int', key: true },
    { name: 'item_index', kind: 'int', key: true },
    { name: 'check_date', kind: 'date' },
    { name: 'type', kind: 'varchar' },
    { name: 'rank_group', kind: 'int' },
    { name: 'rank_absolute', kind: 'int' },
    { name: 'position', kind: 'varchar' },
    { name: 'domain', kind: 'varchar', doc: 'as served (may include www.)' },
    { name: 'title', kind: 'varchar' },
    { name: 'url', kind: 'varchar' },
    { name: 'breadcrumb', kind: 'varchar' },
    { name: 'website_name', kind: 'varchar' },
    { name: 'description', kind: 'varchar' },
    { name: 'is_featured_snippet', kind: 'bool' },
    { name: 'is_image', kind: 'bool' },
    { name: 'is_video', kind: 'bool' },
    { name: 'rating_value', kind: 'double' },
    { name: 'rating_votes_count', kind: 'bigint' },
    { name: 'xpath', kind: 'varchar' },
    { name: 'extra', kind: 'json', doc: 'every other field of the item, so nothing is dropped' },
  ],
};

export const ALL_TABLES: readonly TableSpec[] = [
  runsTable,
  tasksTable,
  ledgerTable,
  rawResponsesTable,
  serpResultsTable,
  serpItemsTable,
];
