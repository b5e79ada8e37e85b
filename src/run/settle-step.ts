import { collectStep, settleLiveTasks } from './collect-step.js';
import type { RunContext } from './context.js';
import { lostChargesNote, resolveUnknown } from '../post/index.js';

/**
 * Settles an older unfinished run without posting: collects what it posted (a direct sweep
 * finds tasks fetched but never loaded), looks its tasks of unknown outcome up by tag, and
 * marks it superseded once nothing of it is left open.
 */
export async function settleStep(c: RunContext, by: string): Promise<void> {
  c.note(`settling earlier unfinished run ${c.runId}: collecting what it posted`);
  await collectStep(c, { sweep: true, timeoutMs: 0 });
  const r = await resolveUnknown({ wh: c.wh, client: c.client, store: c.store, runId: c.runId, now: c.now, sleep: c.o.sleep });
  if (r.error) c.log.warn(r.error);
  if (r.found > 0) {
    const charges = lostChargesNote(r.estimated, r.unrecorded);
    c.note(`run ${c.runId}: ${r.found} task(s) of unknown outcome found by tag (not bought again).${charges ? ` ${charges}` : ''}`);
  }
  await settleLiveTasks(c);
  const waiting = await c.store.waitingEndpointIds();
  const open = await c.store.openTasks();
  const unsent = [...(await c.store.taskStates()).values()].filter((s) => s === 'unsent').length;
  if (waiting.length === 0 && open.length === 0) {
    await c.store.supersedeRun(by, c.now());
    if (unsent) c.note(`run ${c.runId}: ${unsent} task(s) it never sent are left to the new run's plan`);
  } else {
    c.note(`run ${c.runId} still has tasks waiting or of unknown outcome; a later run settles it again`);
  }
}
