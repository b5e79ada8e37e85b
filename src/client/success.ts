import type { Envelope } from './envelope.js';
import { isTaskId } from './task-id.js';

/** Task-level codes that mean success: 20000 (ok) and 20100 (task created). */
export const TASK_OK_CODES: ReadonlySet<number> = new Set([20000, 20100]);

export interface TaskOutcome {
  index: number;
  id: string | null;
  ok: boolean;
  statusCode: number;
  message: string;
  /**
   * The call that gave this verdict, when not the answer's own `callId`: a task refused with
   * 40202 beside others that were taken is posted again alone (ServiceClient.call).
   */
  callId?: string;
}

/** The spec's success rule, evaluated once, with a verdict per task (never a throw). */
export interface CallOutcome {
  /** True only when HTTP, top-level and every task say success. */
  ok: boolean;
  httpOk: boolean;
  topLevelOk: boolean;
  tasks: TaskOutcome[];
  failedTasks: number;
}

/**
 * Applies the spec's success rule: HTTP success, top-level `status_code` 20000, and every
 * `tasks[].status_code` 20000 or 20100. One batch can hold successes and failures, so each
 * task gets its own verdict.
 */
export function evaluateEnvelope(httpStatus: number, envelope: Envelope | undefined, opts: { aiTaskCreation?: boolean } = {}): CallOutcome {
  const httpOk = httpStatus >= 200 && httpStatus < 300;
  // An `.ai` answer keeps only the task's own id and status at the top level: `POST {path}.ai`
  // on a task-creation endpoint answers 20100 (task created) when it succeeds, not 20000.
  const topLevelOk = envelope?.status_code === 20000 || (opts.aiTaskCreation === true && envelope?.status_code === 20100);
  const tasks: TaskOutcome[] = (envelope?.tasks ?? []).map((t, index) => {
    // A task id that is not a UUID is refused: the task gets no id and a failed verdict.
    if (t.id != null && !isTaskId(t.id)) {
      return {
        index,
        id: null,
        ok: false,
        statusCode: t.status_code,
        message: `the service sent a task id that is not a UUID (${JSON.stringify(String(t.id).slice(0, 40))}); refused, nothing is recorded under it`,
      };
    }
    return { index, id: t.id ?? null, ok: TASK_OK_CODES.has(t.status_code), statusCode: t.status_code, message: t.status_message ?? '' };
  });
  const failedTasks = tasks.filter((t) => !t.ok).length;
  return { ok: httpOk && topLevelOk && failedTasks === 0, httpOk, topLevelOk, tasks, failedTasks };
}
