// The door of ops. `pipeline ledger` and `pipeline status` load it and must answer at once on a
// year's warehouse, so what they use (the ledger reports, run statuses, the probe's constants and
// every type) is re-exported from light modules, and doctor, probe and reconcile, which load the
// client, the config and posting, are each loaded when called.
import type * as Doctor from './doctor.js';
import type * as Probe from './probe.js';
import type * as Reconcile from './reconcile.js';

export type { Check, CheckLevel, DoctorOptions } from './doctor.js';
export type { ProbeOutcome, ProbeOptions } from './probe.js';
export { PROBE_LIMIT_CNY, PROBE_PIPELINE } from './probe-plan.js';
export { isTimeZone, ledgerReport, ledgerSummary, ledgerToParquet, type LedgerGrouping, type LedgerQuery } from './ledger-report.js';
export type { ReconcileOptions } from './reconcile.js';
export type { Reconciliation } from './reconciliation.js';
export { runStatuses, type RunStatus } from './status.js';

export const runDoctor: typeof Doctor.runDoctor = async (o) => (await import('./doctor.js')).runDoctor(o);
export const runProbe: typeof Probe.runProbe = async (o) => (await import('./probe.js')).runProbe(o);
export const reconcile: typeof Reconcile.reconcile = async (wh, client) => (await import('./reconcile.js')).reconcile(wh, client);
export const reconcileDays: typeof Reconcile.reconcileDays = async (whs, client, o) =>
  (await import('./reconcile.js')).reconcileDays(whs, client, o);
