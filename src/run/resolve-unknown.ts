import { endpoint, monthsBefore } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import { EtlError } from '../errors.js';
import type { RunStore, Warehouse } from '../warehouse/index.js';
import { findTasksByTag } from './find-by-tag.js';

/** Past the next whole second, for the service's clock to be there too. */
const SECOND_MARGIN_MS = 100;

/**
 * Settles a run's tasks whose POST outcome is unknown (`planned` after a crash, `unknown`
 * after a timeout), as recorded in state: those the service created are recorded with
 * their ids (to be collected, not bought again); those it never created become `unsent`,
 * to be posted. `id_list` with metadata looks back one month, so a tag not found among
 * tasks older than that proves nothing: such tasks stay `unknown` and are reported.
 */
export async function resolveUnknown(a: {
  wh: Warehouse;
  client: ServiceClient;
  store: RunStore;
  runId: string;
  now: () => Date;
  /** Waits out the current second before the lookup (see below); a timer by default, which an abort does not cut short. */
  sleep?: (ms: number) => Promise<void>;
}): Promise<{ found: number; notCreated: number; stillUnknown: number; error?: string }> {
  const open = await a.store.openTasks();
  // id_list windows are whole seconds and may not end after the service's now, so a task
  // created in the current second is listed only once that second is over: looking it up
  // sooner would miss it and buy it again. Every task here was sent before now.
  const sleep = a.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  if (open.length > 0) await sleep(1000 - (a.now().getTime() % 1000) + SECOND_MARGIN_MS);
  let found = 0;
  let notCreated = 0;
  let stillUnknown = 0;
  const byEndpoint = new Map<string, typeof open>();
  for (const t of open) byEndpoint.set(t.endpointId, [...(byEndpoint.get(t.endpointId) ?? []), t]);
  for (const [endpointId, tasks] of byEndpoint) {
    const now = a.now();
    const earliest = new Date(Math.min(...tasks.map((t) => t.plannedAt.getTime())));
    const beyondLookBack = earliest.getTime() - 60_000 < monthsBefore(now, 1);
    let matches;
    try {
      matches = await findTasksByTag(a.client, endpoint(endpointId), new Set(tasks.map((t) => t.tag)), { from: earliest, now });
    } catch (err) {
      if (!(err instanceof EtlError) || err.code === 'ETL_AUTH') throw err;
      return {
        found,
        notCreated,
        stillUnknown: open.length - found - notCreated,
        error: `could not look up ${tasks.length} task(s) of unknown outcome by tag (${err.message}); they are not re-posted`,
      };
    }
    const hit = new Set(matches.map((m) => m.tag));
    await a.store.recordPosted(
      matches.map((m) => ({
        tag: m.tag,
        taskId: m.taskId,
        ok: true,
        statusCode: 20100,
        message: 'found by tag with id_list after an unknown POST outcome',
      })),
      now,
    );
    const missing = tasks.filter((t) => !hit.has(t.tag)).map((t) => t.tag);
    found += matches.length;
    if (beyondLookBack) {
      await a.store.recordUnknown(
        missing,
        'posted more than a month ago: id_list cannot tell whether the service created it, so it is not posted again',
      );
      stillUnknown += missing.length;
    } else {
      await a.store.recordUnsent(missing, 'not found by tag with id_list: the service never created it');
      notCreated += missing.length;
    }
  }
  return { found, notCreated, stillUnknown };
}
