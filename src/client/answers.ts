import type { CallResult } from './client-types.js';
import type { Envelope } from './envelope.js';
import { RETRY_POLICY } from './retry-policy.js';

/** The task status of a rate-limit refusal (not created, not charged). */
export const RATE_LIMITED_TASK = RETRY_POLICY.refusedTaskStatus;

const TASK_40202 = /"status_code"\s*:\s*40202\b/;

/**
 * A rate-limit refusal inside an HTTP 200 answer: top-level `status_code` 40202, or every task
 * echoed with task status 40202 (nothing taken). Most answers hold no 40202 at all: only those
 * are parsed here.
 */
export function rateLimitedIn200(a: { httpStatus: number; text: string }): boolean {
  if (a.httpStatus !== 200 || !TASK_40202.test(a.text)) return false;
  try {
    const e = JSON.parse(a.text) as { status_code?: unknown; tasks?: unknown };
    if (e.status_code === RATE_LIMITED_TASK) return true;
    return (
      e.status_code === 20000 &&
      Array.isArray(e.tasks) &&
      e.tasks.length > 0 &&
      e.tasks.every((t) => (t as { status_code?: unknown } | null)?.status_code === RATE_LIMITED_TASK)
    );
  } catch {
    return false;
  }
}

/**
 * For each task of an answer, the index of the sent task it answers, or null when they cannot be
 * told apart safely: by the echoed `tag` when every task echoes a distinct one of ours, else by
 * position when the answer holds as many tasks as were sent.
 */
export function answerSlots(sent: readonly unknown[], envelope: Envelope): number[] | null {
  const got = envelope.tasks ?? [];
  const tagOf = (t: unknown) => {
    const tag = (t as { tag?: unknown } | null)?.tag;
    return typeof tag === 'string' ? tag : undefined;
  };
  const byTag = new Map<string, number>();
  sent.forEach((t, i) => {
    const tag = tagOf(t);
    if (tag !== undefined) byTag.set(tag, byTag.has(tag) ? -1 : i);
  });
  const echoed = got.map((t) => byTag.get(tagOf(t.data) ?? '\0') ?? -1);
  if (echoed.length > 0 && echoed.every((i) => i >= 0) && new Set(echoed).size === echoed.length) return echoed;
  return got.length === sent.length ? got.map((_, k) => k) : null;
}

/**
 * An answer with the verdicts of a later call on refused tasks put in their places (`targets[j]`:
 * the slot in `prev`'s answer of the later answer's task j); each verdict names the call that gave it.
 */
export function mergeAnswers(
  prev: CallResult & { retryAfterMs: number | null },
  again: CallResult & { retryAfterMs: number | null },
  targets: readonly number[],
): CallResult & { retryAfterMs: number | null } {
  const tasks = [...(prev.envelope.tasks ?? [])];
  const verdicts = prev.outcome.tasks.map((t) => ({ ...t, callId: t.callId ?? prev.callId }));
  (again.envelope.tasks ?? []).forEach((t, j) => {
    const slot = targets[j]!;
    tasks[slot] = t;
    verdicts[slot] = { ...again.outcome.tasks[j]!, index: slot, callId: again.callId };
  });
  const failedTasks = verdicts.filter((t) => !t.ok).length;
  return {
    ...prev,
    envelope: { ...prev.envelope, tasks, tasks_error: failedTasks },
    outcome: { ...prev.outcome, tasks: verdicts, failedTasks, ok: prev.outcome.httpOk && prev.outcome.topLevelOk && failedTasks === 0 },
    retryAfterMs: again.retryAfterMs,
  };
}
