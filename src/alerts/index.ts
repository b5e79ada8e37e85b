/**
 * The `alerts` stage: rules evaluated after the models are built and tested, alerts
 * stored once (deterministic ids) and delivered once to the pipeline's webhook.
 */
export { alertStep, type AlertOutcome, type AlertStepOptions } from './alert-step.js';
export { missedNightsStep, type MissedNightsStepOptions } from './missed-nights-step.js';
export { missedNights, readRunStarts, type RunStart } from './missed-nights.js';
export { scheduledIntervalDays } from './scheduled-interval.js';
export { scheduledTicks } from './cron-ticks.js';
export { alertId, type AlertDraft, type RankSubject, type StoredAlert } from './alert.js';
export { AlertStore } from './alert-store.js';
export { deliverPending, type DeliveryResult } from './deliver-pending.js';
export { evaluateRankRules, type RankRuleContext } from './rank-rules.js';
export { evaluateRunRules, type RunFacts } from './run-rules.js';
export { readRankObservations, type RankObservation } from './rank-observations.js';
export { alertPayload, type AlertJson, type AlertPayload } from './payload.js';
export { postWebhook, WEBHOOK_TIMEOUT_MS, type PostResult } from './post-webhook.js';
export { sendSampleAlert } from './send-sample.js';
