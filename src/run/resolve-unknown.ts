import type { ServiceClient } from '../client/index.js';
import { EtlError } from '../errors.js';
import type { Plan } from '../plan/index.js';
import type { RunStore, Warehouse } from '../warehouse/index.js';
import { findTasksByTag } from './find-by-tag.js';
import { markTasks, taskStates } from './run-state.js';

/**
 * Settles tasks whose POST outcome is unknown (`planned` after a crash, `unknown` after a
 * timeout): those the service created are recorded with their ids (to be collected, not
 * bought again); those it never created become `unsent`, to be posted. Returns a reason
 * when the lookup itself failed, in which case nothing is posted for them.
 */
export async function resolveUnknown(a: {
  wh: Warehouse;
  client: ServiceClient;
  store: RunStore;
  plan: Plan;
  runStartedAt: Date;
  now: () => Date;
}): Promise<{ found: number; notCreated: number; error?: string }> {
  const states = await taskStates(a.wh, a.plan.runId);
  const open = a.plan.tasks.filter((t) => states.get(t.tag) === 'planned' || states.get(t.tag) === 'unknown');
  let found = 0;
  let notCreated = 0;
  const byEndpoint = new Map<string, typeof open>();
  for (const t of open) byEndpoint.set(t.endpoint.id, [...(byEndpoint.get(t.endpoint.id) ?? []), t]);
  for (const tasks of byEndpoint.values()) {
    const ep = tasks[0]!.endpoint;
    let matches;
    try {
      matches = await findTasksByTag(a.client, ep, new Set(tasks.map((t) => t.tag)), { from: a.runStartedAt, now: a.now() });
    } catch (err) {
      if (!(err instanceof EtlError) || err.code === 'ETL_AUTH') throw err;
      return { found, notCreated, error: `could not look up ${tasks.length} task(s) of unknown outcome by tag (${err.message}); they are not re-posted` };
    }
    const hit = new Set(matches.map((m) => m.tag));
    await a.store.recordPosted(
      matches.map((m) => ({ tag: m.tag, taskId: m.taskId, ok: true, statusCode: 20100, message: 'found by tag with id_list after an unknown POST outcome' })),
      a.now(),
    );
    const missing = tasks.filter((t) => !hit.has(t.tag)).map((t) => t.tag);
    await markTasks(a.wh, a.plan.runId, missing, 'unsent', 'not found by tag with id_list: the service never created it');
    found += matches.length;
    notCreated += missing.length;
  }
  return { found, notCreated };
}
