import type { Endpoint } from '../catalog/index.js';
import type { ServiceReadingsRecord } from '../warehouse/index.js';

/** A record older than this many days is named as old: the service may have changed since the probe. */
export const READINGS_OLD_AFTER_DAYS = 30;

/** Tasks a POST an endpoint takes when a recorded reading says so (undefined: the catalog's figure). */
export type TasksPerPost = (ep: Endpoint) => number | undefined;

/**
 * What a run (and `pipeline plan`) takes from the record `pipeline doctor --probe` left
 * (`service-readings.json`), and the lines that say so. Only readings the client does not
 * adapt to by itself are used:
 *
 * - `asyncTasksPerPost: 1`: standard `task_post` POSTs carry one task from the start (events
 *   `task_post` keeps its own 100, as the spec states), instead of 100 refused 40006 for 99 and
 *   shrunk; the plan counts those POSTs and their rate-limit time.
 * - `refunds`: only named. The run's balance-refund finding (ledger.ts `balanceRefunds`) runs
 *   under every reading: a service that changed its reading since the probe must not make a
 *   refund go unrecorded, so nothing is skipped.
 * - `clockSkewSeconds`: not used. Every answer's `Date` header bounds the service's clock
 *   (client/server-clock.ts); a recorded skew could be stale, and a guess past the service's
 *   "now" is refused by id_list.
 */
export interface ReadingsInUse {
  /** When the probe ran (ISO), or null with no record. */
  probedAt: string | null;
  ageDays: number | null;
  /** True when the record is older than {@link READINGS_OLD_AFTER_DAYS}. */
  old: boolean;
  /** The readings the run followed or assumed, by name. */
  used: Record<string, string | number>;
  tasksPerPost: TasksPerPost;
  /** Lines for the run's notes and `pipeline plan` (empty with no record). */
  notes: string[];
}

/** What to use of `record` (null: no probe ran; everything as before). */
export function readingsInUse(record: ServiceReadingsRecord | null, now: Date): ReadingsInUse {
  if (!record) return { probedAt: null, ageDays: null, old: false, used: {}, tasksPerPost: () => undefined, notes: [] };
  const ageDays = Math.max(0, Math.floor((now.getTime() - Date.parse(record.probedAt)) / 86_400_000));
  const old = ageDays > READINGS_OLD_AFTER_DAYS;
  const used: Record<string, string | number> = {};
  const said: string[] = [];
  const perPost = record.readings.asyncTasksPerPost?.value;
  if (perPost === 1 || perPost === 100) {
    used.asyncTasksPerPost = perPost;
    said.push(
      perPost === 1
        ? 'one task a task_post POST (asyncTasksPerPost=1; events task_post keeps 100)'
        : 'up to 100 tasks a task_post POST (asyncTasksPerPost=100)',
    );
  }
  const refunds = record.readings.refunds?.value;
  if (refunds === 'task-cost' || refunds === 'balance' || refunds === 'none-seen') {
    used.refunds = refunds;
    said.push(
      `refunds of unused depth ${refunds === 'balance' ? 'show in the balance only' : refunds === 'task-cost' ? "show in the task's cost" : 'were not seen'} (refunds=${refunds}; the balance is checked for refunds under every reading)`,
    );
  }
  const notes =
    said.length === 0
      ? []
      : [
          `service readings recorded by pipeline doctor --probe at ${record.probedAt} (${ageDays} day(s) ago): ${said.join('; ')}`,
          ...(old
            ? [
                `the service readings are old (${ageDays} days, over ${READINGS_OLD_AFTER_DAYS}): the service may have changed since; run pipeline doctor --probe --yes to refresh them`,
              ]
            : []),
        ];
  return {
    probedAt: record.probedAt,
    ageDays,
    old,
    used,
    tasksPerPost: (ep) => (perPost === 1 && ep.mode === 'task_post' && ep.api !== 'v1' && ep.family !== 'events_task_post' ? 1 : undefined),
    notes,
  };
}
