export { runDoctor, type Check, type CheckLevel, type DoctorOptions } from './doctor.js';
export { runProbe, type ProbeOutcome, type ProbeOptions } from './probe.js';
export { PROBE_LIMIT_CNY, PROBE_PIPELINE } from './probe-plan.js';
export { isTimeZone, ledgerReport, ledgerSummary, ledgerToParquet, type LedgerGrouping, type LedgerQuery } from './ledger-report.js';
export { reconcile, reconcileDays, type Reconciliation, type ReconcileOptions } from './reconcile.js';
export { runStatuses, type RunStatus } from './status.js';
