import { endpoint, formatSpecDatetime, monthsBefore, type Endpoint } from '../catalog/index.js';
import type { ServiceClient } from '../client/index.js';

export interface TagMatch {
  tag: string;
  taskId: string;
  /** The task's raw USD cost as id_list lists it (its cost at creation), when given. */
  cost?: number;
}

/** The `{api}` of a task endpoint (`serp.engA.organic.task_post` → `serp`), whose id_list knows its tasks. */
export function apiOf(ep: Endpoint): string {
  return ep.id.split('.')[0]!;
}

/**
 * Finds tasks the service created from our POSTs whose answers never came, by the tag the
 * service keeps in each task's metadata: `{api}/id_list` with `include_metadata`, over the
 * window since the run started (at most the 1-month look-back the spec allows), paged
 * 1000 at a time. Tags not found were not created and can be posted again.
 *
 * The window is on the service's clock (the spec's "not after now" is the service's now, and a
 * client clock ahead of it is refused; one behind it would end the window before the tasks were
 * created): `window.from` (our clock) is moved onto it, and the window ends at a whole second of
 * it past everything the service did until our `window.now`, waited for if need be
 * (ServiceClient.serverSecondAfter).
 */
export async function findTasksByTag(
  client: ServiceClient,
  ep: Endpoint,
  tags: ReadonlySet<string>,
  window: { from: Date; now: Date },
  sleep?: (ms: number) => Promise<void>,
): Promise<TagMatch[]> {
  const list = endpoint(`${apiOf(ep)}.id_list`);
  const now = await client.serverSecondAfter(window.now, sleep);
  const from = new Date(Math.max(client.toServerTime(window.from).getTime() - 60_000, monthsBefore(now, 1) + 60_000));
  const found: TagMatch[] = [];
  for (let offset = 0; ; offset += 1000) {
    const call = await client.call(list, {
      tasks: [
        {
          datetime_from: formatSpecDatetime(from),
          datetime_to: formatSpecDatetime(now),
          include_metadata: true,
          limit: 1000,
          offset,
          sort: 'asc',
        },
      ],
    });
    const rows = (call.envelope.tasks?.[0]?.result ?? []) as { id?: unknown; cost?: unknown; metadata?: { tag?: unknown } | null }[];
    for (const r of rows) {
      const tag = r?.metadata?.tag;
      if (typeof tag === 'string' && tags.has(tag) && typeof r.id === 'string')
        found.push({ tag, taskId: r.id, ...(typeof r.cost === 'number' ? { cost: r.cost } : {}) });
    }
    if (rows.length < 1000) return found;
  }
}
