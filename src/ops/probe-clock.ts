import type { Dispatcher } from 'undici';
import { endpoint } from '../catalog/index.js';
import { ServiceClient, type ClientOptions } from '../client/index.js';
import type { ServiceReadingsRecord } from '../warehouse/index.js';
import { serviceSkewMs } from './doctor.js';

/** The service's clock minus ours, ms: null when it sent no Date header or it could not be read. */
export interface ClockSkew {
  skewMs: number | null;
  reading: ServiceReadingsRecord['readings']['clockSkewSeconds'];
}

/** Reads the service's clock from the Date header of a free `GET /`. */
export async function readClockSkew(baseUrl: string, now: () => Date, dispatcher?: Dispatcher): Promise<ClockSkew> {
  try {
    // The Date header is cut to the second: the service's time is half a second past it on average.
    const cut = await serviceSkewMs(baseUrl, now, dispatcher);
    const skewMs = cut === null ? null : cut + 500;
    return {
      skewMs,
      reading:
        skewMs === null
          ? { value: 'unknown', detail: 'the service sent no Date header' }
          : {
              value: Math.round(skewMs / 1000),
              detail: `the service's clock is ${Math.abs(skewMs / 1000).toFixed(1)} s ${skewMs >= 0 ? 'ahead of' : 'behind'} ours (its Date header, whole seconds, read as mid-second)`,
            },
    };
  } catch (err) {
    return { skewMs: null, reading: { value: 'unknown', detail: `could not read the service's Date header: ${(err as Error).message}` } };
  }
}

/**
 * Whether id_list's window needs the service's clock: the task looked up in the last hour
 * bounded by the service's clock, then by ours (by ours alone when the skew is unknown). The
 * note is added to the clock reading's detail.
 */
export async function idListNote(clientOptions: ClientOptions, taskId: string, skewMs: number | null, now: () => Date): Promise<string> {
  const byService = await listsTask(clientOptions, taskId, () => new Date(now().getTime() + (skewMs ?? 0)));
  const byOurs = skewMs === null ? byService : await listsTask(clientOptions, taskId, now);
  const say = (v: boolean | string) => (v === true ? 'lists the task' : v === false ? 'misses the task' : `failed (${v})`);
  return skewMs === null
    ? `; id_list bounded by our clock ${say(byOurs)}`
    : `; id_list bounded by the service's clock ${say(byService)}, by ours ${say(byOurs)}`;
}

const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace(/:/g, '-').slice(0, 19) + ' +00:00';

/** Whether id_list (free) over the last hour by `clock` lists the task, or why it failed. */
async function listsTask(clientOptions: ClientOptions, taskId: string, clock: () => Date): Promise<boolean | string> {
  // A client on that clock: it checks the bounds against it, as the service does against its own.
  const c = new ServiceClient({ ...clientOptions, now: clock });
  const at = clock().getTime();
  try {
    const ids = await c.call(endpoint('serp.id_list'), {
      tasks: [{ datetime_from: stamp(at - 3_600_000), datetime_to: stamp(at), limit: 1000, sort: 'desc' }],
    });
    return (ids.envelope.tasks?.[0]?.result ?? []).some((x) => (x as { id?: string }).id === taskId);
  } catch (err) {
    return (err as Error).message;
  }
}
