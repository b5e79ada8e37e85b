import { listValue } from '@duckdb/node-api';
import type { CallResult } from '../client/index.js';
import { unloadedWhy } from '../collect/index.js';
import type { PlannedBatch, PlannedTask } from '../plan/index.js';
import { loadLanded, type PostedTaskRow, type RunStore, type Warehouse } from '../warehouse/index.js';

/** What a POST's answer (task_post or live) says of each of its tasks, in the shape `RunStore.recordPosted` takes. */
export function postedRows(batch: PlannedBatch, call: CallResult): PostedTaskRow[] {
  const byTag = new Map<string, PlannedTask>(batch.tasks.map((t) => [t.tag, t]));
  return (call.envelope.tasks ?? [])
    .map((task, i) => {
      const echoed = (task.data as { tag?: unknown } | undefined)?.tag;
      const tag = typeof echoed === 'string' && byTag.has(echoed) ? echoed : batch.tasks[i]?.tag;
      const verdict = call.outcome.tasks[i]!;
      return {
        tag: tag ?? '',
        taskId: task.id ?? null,
        ok: verdict.ok,
        statusCode: verdict.statusCode,
        message: verdict.message,
        costUsd: task.cost ?? null,
        postCallId: verdict.callId ?? call.callId,
      };
    })
    .filter((r) => r.tag !== '');
}

/**
 * Loads live answers already landed: the rows of the given tasks and their collected marks
 * commit together. Only a task with a landed, readable answer is marked collected (the load's
 * `picked`); the others stay `posted` and are returned in `unloaded` with why, for settleLive,
 * which marks them failed: a live result cannot be fetched again, and marked collected it would
 * have shown as a task that gave no rows. Returns the tables that received rows.
 */
export async function loadLiveTasks(
  wh: Warehouse,
  store: RunStore,
  taskIds: readonly string[],
  at: Date,
): Promise<{ tables: string[]; rows: number; unloaded: string[]; why: string; rereadPlain: string[] }> {
  if (taskIds.length === 0) return { tables: [], rows: 0, unloaded: [], why: '', rereadPlain: [] };
  const report = await loadLanded(wh, { taskIds }, async (loaded) => {
    await store.markCollected(new Map(taskIds.filter((id) => loaded.picked.has(id)).map((id) => [id, loaded.perTask.get(id) ?? 0])), at);
  });
  let rows = 0;
  const tables: string[] = [];
  for (const [table, n] of report.rows) {
    rows += n;
    if (n > 0) tables.push(table);
  }
  const unloaded = taskIds.filter((id) => !report.picked.has(id));
  const why = unloadedWhy(report.skippedFiles, 'no parsed answer in the raw index names the task');
  return { tables, rows, unloaded, why, rereadPlain: report.rereadPlain };
}

/**
 * Settles a run's live tasks left `posted` (a crash between the answer and its load, or a
 * task of unknown outcome that `id_list` found): an answer in the raw landing is loaded
 * from there, with no call; a task the service created whose answer never arrived, or whose
 * landed answer cannot be loaded, is marked failed with the reason, and is not bought again.
 */
export async function settleLive(a: {
  wh: Warehouse;
  store: RunStore;
  runId: string;
  at: Date;
  isLive: (endpointId: string) => boolean;
}): Promise<{ loaded: number; lost: number; unloadable: number; why: string; tables: string[]; rereadPlain: string[] }> {
  const posted = (await a.store.pendingTasks()).filter((t) => a.isLive(t.endpointId));
  if (posted.length === 0) return { loaded: 0, lost: 0, unloadable: 0, why: '', tables: [], rereadPlain: [] };
  const ids = posted.map((t) => t.taskId);
  await a.wh.flushIndex();
  const landed = new Set(
    (
      await a.wh.all<{ id: string }>(
        `SELECT DISTINCT unnest(task_ids) AS id FROM raw_responses WHERE list_has_any(task_ids, $1::VARCHAR[])`,
        [listValue(ids)],
      )
    ).map((r) => r.id),
  );
  const inLanding = ids.filter((id) => landed.has(id));
  const lost = ids.filter((id) => !landed.has(id));
  const { tables, unloaded, why, rereadPlain } = await loadLiveTasks(a.wh, a.store, inLanding, a.at);
  await a.store.markFailed([
    ...lost.map((taskId) => ({
      taskId,
      statusCode: 0,
      message:
        'live call charged (the service has the task) but its answer never arrived; a live result cannot be fetched again, so it is not bought twice',
    })),
    ...unloaded.map((taskId) => ({
      taskId,
      statusCode: 0,
      message: `live call charged and its answer landed, but it could not be loaded (${why}); the body is kept under raw/ (\`pipeline replay\` loads it once it reads), and a live result is not bought twice`,
    })),
  ]);
  return { loaded: inLanding.length - unloaded.length, lost: lost.length, unloadable: unloaded.length, why, tables, rereadPlain };
}

/** Live calls in flight at once: enough to keep a rate-limited family busy, few enough to stop promptly. */
export const LIVE_CONCURRENCY = Number(process.env.PIPELINE_LIVE_CONCURRENCY ?? 4);
