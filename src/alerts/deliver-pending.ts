import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { AlertsConfig, Env } from '../config/index.js';
import type { StoredAlert } from './alert.js';
import type { AlertStore } from './alert-store.js';
import { alertPayload } from './payload.js';
import { postWebhook } from './post-webhook.js';

/** Alerts in one digest message at most; more go in further messages. */
export const DIGEST_MAX = 200;

export interface DeliverOptions {
  store: AlertStore;
  pipeline: string;
  alerts: AlertsConfig;
  /** Where the secret named by `secret_env` is read; default `process.env`. */
  env?: Env;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
  now: () => Date;
  logger: Logger;
}

export interface DeliveryResult {
  /** Messages POSTed and acknowledged. */
  sent: number;
  delivered: number;
  /** Still pending after this attempt (tried and refused, or not tried after a refusal). */
  pending: number;
  /** Why the last message was not acknowledged; null when every one was. */
  error: string | null;
}

/**
 * Sends a pipeline's pending alerts, this run's and any an earlier run could not deliver:
 * one digest message (or one per alert with `digest: false`), each marked delivered only
 * after a 2xx. The first refusal stops sending (the receiver is down; every alert stays
 * pending for the next run). A SIGKILL after a 2xx and before its mark sends that message
 * again next run with the same `X-Pipeline-Delivery` id, so a receiver can drop the repeat.
 */
export async function deliverPending(o: DeliverOptions): Promise<DeliveryResult> {
  const pending = await o.store.pending(o.pipeline);
  const groups = o.alerts.digest ? chunks(pending, DIGEST_MAX) : pending.map((a) => [a]);
  const secret = o.alerts.secret_env ? (o.env ?? process.env)[o.alerts.secret_env] : undefined;
  const result: DeliveryResult = { sent: 0, delivered: 0, pending: pending.length, error: null };
  if (o.alerts.secret_env && !secret) {
    // Checked when the file was read; gone since. Unsigned messages would be refused or trusted wrongly.
    result.error = `environment variable ${o.alerts.secret_env} is not set: alerts are not sent unsigned; they stay pending`;
    o.logger.warn({ pipeline: o.pipeline, pending: pending.length }, result.error);
    return result;
  }
  for (const group of groups) {
    const ids = group.map((a) => a.id);
    const posted = await postWebhook({
      url: o.alerts.webhook,
      body: JSON.stringify(alertPayload(o.pipeline, group)),
      secret,
      alertIds: ids,
      dispatcher: o.dispatcher,
      timeoutMs: o.timeoutMs,
    });
    if (posted.ok) {
      await o.store.markDelivered(ids, o.now());
      result.sent++;
      result.delivered += ids.length;
      result.pending -= ids.length;
      continue;
    }
    await o.store.markAttemptFailed(ids, posted.error, o.now());
    result.error = posted.error;
    o.logger.warn(
      { pipeline: o.pipeline, alerts: ids.length, pending: result.pending },
      `alerts not delivered: ${posted.error}; they stay pending and are sent again at the next run`,
    );
    break;
  }
  if (result.sent) o.logger.info({ pipeline: o.pipeline, messages: result.sent, alerts: result.delivered }, 'alerts delivered');
  return result;
}

function chunks(list: readonly StoredAlert[], size: number): StoredAlert[][] {
  const out: StoredAlert[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
