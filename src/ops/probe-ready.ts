import { endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';
import type { ServiceReadingsRecord } from '../warehouse/index.js';

export interface ReadyWait {
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  /** Between two looks at the ready list. */
  pollMs: number;
  /** How long to wait for the task to be done. */
  maxWaitMs: number;
}

/**
 * Waits for the task to be done by the free ready list: whether it was listed in time, and the
 * reading of how many tasks one answer lists.
 */
export async function waitUntilReady(
  client: ServiceClient,
  taskId: string,
  w: ReadyWait,
): Promise<{ ready: boolean; readyListPaging: ServiceReadingsRecord['readings']['readyListPaging'] }> {
  let listedMost = 0;
  let ready = false;
  const deadline = w.now().getTime() + w.maxWaitMs;
  for (;;) {
    const list = await client.call(endpoint('serp.engA.organic.tasks_ready'));
    const items = (list.envelope.tasks ?? []).flatMap((t) => (t.result ?? []) as { id?: string }[]);
    listedMost = Math.max(listedMost, items.length);
    if (items.some((i) => i.id === taskId)) {
      ready = true;
      break;
    }
    if (w.now().getTime() >= deadline) break;
    await w.sleep(w.pollMs);
  }
  return {
    ready,
    readyListPaging: {
      value: 'unknown',
      detail: `one tasks_ready answer listed at most ${listedMost} task(s); a page's size shows only with more ready tasks than a page holds (not probed: it would need buying them)`,
    },
  };
}
