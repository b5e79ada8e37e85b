import type { TableSpec } from './columns.js';

/**
 * One row per alert: written (committed) before any delivery is tried, then marked
 * delivered after a 2xx. The id is a hash of rule, pipeline, subject and date, so a rerun
 * or a resumed run finds the row already there. Its writer is `src/alerts/alert-store.ts`.
 */
export const alertsTable: TableSpec = {
  name: 'alerts',
  grain: 'one row per rule, pipeline, subject and check date',
  partitionBy: 'check_date',
  columns: [
    { name: 'alert_id', kind: 'varchar', key: true, doc: 'hash of rule, pipeline, subject and check date: the same alert is never made twice' },
    { name: 'pipeline', kind: 'varchar' },
    { name: 'rule', kind: 'varchar', doc: 'the alert rule that made it: a key of the pipeline file\'s `alerts.rules` (src/alerts/rules), e.g. rank_drop, spend_over_cny, missed_nights' },
    { name: 'subject', kind: 'varchar', doc: 'what the alert is about, in words: keyword / location / device / domain, a run, or the pipeline' },
    { name: 'keyword', kind: 'varchar', doc: 'rank rules only' },
    { name: 'location_code', kind: 'int' },
    { name: 'language_code', kind: 'varchar' },
    { name: 'device', kind: 'varchar' },
    { name: 'engine', kind: 'varchar' },
    { name: 'domain', kind: 'varchar', doc: 'the tracked domain (rank rules only)' },
    { name: 'run_id', kind: 'varchar', doc: 'the run whose step made the alert' },
    { name: 'check_date', kind: 'date', doc: 'rank rules: the check; run rules: the UTC day the run started; missed_nights: the first missed night' },
    { name: 'value_before', kind: 'varchar', doc: "e.g. '4', 'beyond 100', a URL, an estimate in CNY" },
    { name: 'value_after', kind: 'varchar' },
    { name: 'threshold', kind: 'varchar', doc: 'the rule value that was passed' },
    { name: 'days_since_previous', kind: 'int', doc: 'rank rules: days between the two checks compared' },
    { name: 'across_gap', kind: 'bool', doc: 'rank rules: the checks are further apart than one scheduled interval (a failed or skipped night between)' },
    { name: 'message', kind: 'varchar', doc: 'the line sent (Slack mrkdwn)' },
    { name: 'created_at', kind: 'timestamptz' },
    { name: 'delivery_state', kind: 'varchar', doc: 'pending (not yet acknowledged with a 2xx; retried at the next run) or delivered' },
    { name: 'attempts', kind: 'int', doc: 'POSTs tried' },
    { name: 'last_attempt_at', kind: 'timestamptz' },
    { name: 'last_error', kind: 'varchar', doc: 'why the last POST was not acknowledged (HTTP status or timeout); null once delivered' },
    { name: 'delivered_at', kind: 'timestamptz' },
  ],
};
