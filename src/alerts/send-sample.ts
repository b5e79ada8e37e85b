import type { Dispatcher } from 'undici';
import type { AlertsConfig, Env } from '../config/index.js';
import type { StoredAlert } from './alert.js';
import { alertPayload } from './payload.js';
import { postWebhook, type PostResult } from './post-webhook.js';

/**
 * Sends one made-up alert to a pipeline's webhook, signed as real ones are, so a user can
 * see the message before a night makes one. Nothing is stored.
 */
export async function sendSampleAlert(o: {
  pipeline: string;
  alerts: AlertsConfig;
  now: Date;
  env?: Env;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
}): Promise<PostResult> {
  const day = o.now.toISOString().slice(0, 10);
  const sample: StoredAlert = {
    id: 'sample',
    rule: 'rank_drop',
    pipeline: o.pipeline,
    subject: 'example keyword / 2840 en / desktop / engA / example.com',
    series: {
      keyword: 'example keyword',
      locationCode: 2840,
      languageCode: 'en',
      device: 'desktop',
      engine: 'engA',
      domain: 'example.com',
    },
    runId: null,
    checkDate: day,
    before: '#4',
    after: '#9',
    threshold: '3',
    daysSincePrevious: 1,
    acrossGap: false,
    message: `_Test message from \`pipeline alerts test\`:_ *example.com* dropped 5 places for "example keyword" (2840 en, desktop, engA): #4 → #9 on ${day}`,
    createdAt: o.now.toISOString(),
    deliveryState: 'pending',
    attempts: 0,
    lastAttemptAt: null,
    lastError: null,
    deliveredAt: null,
  };
  const secret = o.alerts.secret_env ? (o.env ?? process.env)[o.alerts.secret_env] : undefined;
  return postWebhook({
    url: o.alerts.webhook,
    body: JSON.stringify(alertPayload(o.pipeline, [sample])),
    secret,
    alertIds: [`sample-${o.now.toISOString()}`],
    dispatcher: o.dispatcher,
    timeoutMs: o.timeoutMs,
  });
}
