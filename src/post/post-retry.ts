import type { Endpoint } from '../catalog/index.js';
import { EtlError } from '../errors.js';
import type { PlannedTask } from '../plan/index.js';
import type { PostedTaskRow } from '../warehouse/index.js';
import type { PostContext } from './context.js';
import { findTasksByTag } from './find-by-tag.js';
import type { FailedPost } from './post-step.js';

/** Look-ups (and re-posts of what was not created) after 5xx answers to one POST, before it is left to the next run. */
export const MAX_LOOKUPS = 3;
/** First wait before a re-post; doubles per look-up. */
const REPOST_BACKOFF_MS = 500;

/**
 * After a charged POST answered with a 5xx, the service may have created (and charged) some
 * or all of its tasks: the spec says to retry 5xx with backoff, and a blind retry would buy
 * them twice. So the tasks are looked up by tag with `id_list` first (free): those found are
 * recorded with their ids (collected, never bought again; their cost is id_list's and the
 * failed POST's ratio prices a refund), the rest are returned to be posted again after a
 * backoff. Returns null when this is not such a failure (a refusal, a timeout with no
 * answer, a body without tags), when the look-ups are used up, or when the look-up itself
 * failed: the caller then records the tasks `unknown`, and the next run looks them up again.
 */
export async function lookUpAfter5xx(
  c: PostContext,
  ep: Endpoint,
  tasks: readonly PlannedTask[],
  outcome: FailedPost,
  attempt: number,
): Promise<{ found: PostedTaskRow[]; missing: Set<string> } | null> {
  const status = outcome.error.context.httpStatus;
  if (outcome.kind !== 'unknown' || typeof status !== 'number' || status < 500 || ep.body !== 'tasks' || ep.mode !== 'task_post')
    return null;
  if (attempt > MAX_LOOKUPS) return null;
  // id_list windows are whole seconds ending no later than the service's now: a task created
  // in this second is listed once it is over, on the service's clock (findTasksByTag waits).
  const tags = new Set(tasks.map((t) => t.tag));
  let matches;
  try {
    const now = c.now();
    matches = await findTasksByTag(c.client, ep, tags, { from: new Date(now.getTime() - 10 * 60_000), now }, c.sleep);
  } catch (err) {
    if (!(err instanceof EtlError) || err.code === 'ETL_AUTH') throw err;
    c.log.warn({ err: err.message }, 'look-up by tag after a 5xx failed; the tasks are left for the next run to look up');
    return null;
  }
  const postCallId = (outcome.error.context.clientRequestIds as string[] | undefined)?.at(-1) ?? null;
  const found: PostedTaskRow[] = matches.map((m) => ({
    tag: m.tag,
    taskId: m.taskId,
    ok: true,
    statusCode: 20100,
    message: `found by tag with id_list after HTTP ${status}: created, not bought again`,
    costUsd: m.cost ?? null,
    postCallId,
  }));
  const hit = new Set(found.map((r) => r.tag));
  const missing = new Set([...tags].filter((t) => !hit.has(t)));
  c.note(
    `${ep.path} answered HTTP ${status}: ${found.length} of ${tags.size} task(s) found by tag (kept, not bought again)${missing.size ? `, ${missing.size} not created (posted again)` : ''}`,
  );
  if (missing.size > 0) await c.sleep(REPOST_BACKOFF_MS * 2 ** (attempt - 1));
  return { found, missing };
}
