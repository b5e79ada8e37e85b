export { runDoctor, type Check, type CheckLevel, type DoctorOptions } from './doctor.js';
export { runProbe, type ProbeOutcome, type ProbeOptions } from './probe.js';
export { PROBE_LIMIT_CNY, PROBE_PIPELINE } from './probe-plan.js';
export { isTimeZone, ledgerReport, ledgerSummary, ledgerToParquet, type LedgerGrouping, type LedgerQuery } from './ledger-report.js';
export { reconcile, reconcileDays, type ReconcileOptions } from './reconcile.js';
export type { Reconciliation } from './reconciliation.js';
export { runStatuses, type RunStatus } from './status.js';
