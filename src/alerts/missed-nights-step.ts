import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { AlertsConfig, Env, Pipeline } from '../config/index.js';
import type { Warehouse } from '../warehouse/index.js';
import { AlertStore } from './alert-store.js';
import { deliverPending, type DeliveryResult } from './deliver-pending.js';
import { missedNights, readRunStarts } from './missed-nights.js';

export interface MissedNightsStepOptions {
  wh: Warehouse;
  pipeline: Pick<Pipeline, 'name' | 'schedule' | 'timezone'> & { alerts?: AlertsConfig | undefined };
  now: () => Date;
  logger: Logger;
  dispatcher?: Dispatcher;
  env?: Env;
  timeoutMs?: number;
}

/**
 * For the scheduler, when a pipeline's night passed without a completed run (its run
 * failed or was partial, a tick was skipped because the previous run was still going, or
 * the scheduler was down): records the missed_nights alert when N scheduled nights have
 * passed since the last completed run, and delivers what is pending. One streak makes one
 * alert (its id is the first missed night). Returns null when the pipeline has no
 * missed_nights rule.
 */
export async function missedNightsStep(o: MissedNightsStepOptions): Promise<{ created: number; delivery: DeliveryResult } | null> {
  const alerts = o.pipeline.alerts;
  if (!alerts || alerts.rules.missed_nights === undefined) return null;
  const store = new AlertStore(o.wh);
  const draft = missedNights(o.pipeline, await readRunStarts(o.wh, o.pipeline.name), o.now());
  const created = draft ? await store.record([draft], o.now()) : [];
  const log = o.logger.child({ pipeline: o.pipeline.name, step: 'missed_nights' });
  const delivery = await deliverPending({
    store,
    pipeline: o.pipeline.name,
    alerts,
    env: o.env,
    dispatcher: o.dispatcher,
    timeoutMs: o.timeoutMs,
    now: o.now,
    logger: log,
  });
  return { created: created.length, delivery };
}
