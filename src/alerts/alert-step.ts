import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { AlertsConfig, Env, Pipeline } from '../config/index.js';
import { runQueries, type Warehouse } from '../warehouse/index.js';
import type { AlertDraft } from './alert.js';
import { AlertStore } from './alert-store.js';
import { deliverPending } from './deliver-pending.js';
import { missedNights, readRunStarts } from './missed-nights.js';
import { readRankObservations } from './rank-observations.js';
import { evaluateRankRules } from './rank-rules.js';
import { evaluateRunRules } from './run-rules.js';
import { scheduledIntervalDays } from './scheduled-interval.js';

export interface AlertStepOptions {
  /** The run's open warehouse; the models are built and tested. */
  wh: Warehouse;
  pipeline: Pick<Pipeline, 'name' | 'schedule' | 'timezone'> & { alerts?: AlertsConfig | undefined };
  runId: string;
  /** How the run ended (before publish). */
  runState: 'completed' | 'partial' | 'failed';
  stopReason: string | null;
  /** The run's plan estimate in CNY; null when it could not be priced (estimate_exceeded is then silent). */
  estimateCny: number | null;
  /** What the run was charged, net of refunds; default: the sum of its calls' charge headers in the ledger (refunds are negative charges). */
  chargedNetCny?: number;
  now: () => Date;
  logger: Logger;
  /** Reaches the webhook (tests: a loopback receiver); undici's global one by default. */
  dispatcher?: Dispatcher;
  /** Where `secret_env` is read; default `process.env`. */
  env?: Env;
  /** Default 10 s. */
  timeoutMs?: number;
  /** Called after the alerts are committed and before any delivery (crash tests stop here). */
  afterBuild?: (newAlerts: number) => Promise<void> | void;
}

/** What the alert step did, for the run summary. */
export interface AlertOutcome {
  /** `skipped` when the pipeline has no `alerts:` block. */
  status: 'done' | 'skipped';
  /** Alerts the rules found for this run, whether stored before or not. */
  found: number;
  /** Of those, stored now for the first time. */
  created: number;
  /** Alerts acknowledged by the webhook in this step (earlier runs' pending ones included). */
  delivered: number;
  /** Alerts of the pipeline left pending for the next run. */
  pending: number;
  /** Why delivery stopped; null when everything pending was delivered. */
  deliveryError: string | null;
}

/**
 * The alerts step of a run, after the models are built and tested and before publish:
 * (1) evaluates the pipeline's rules for this run (rank rules on the tracked domains of
 * the checks it collected, run rules on its end and money, missed_nights when it did not
 * complete) and commits them to `alerts` (ids are deterministic: a rerun or a resume adds
 * nothing twice); (2) delivers every pending alert of the pipeline. Delivery problems never
 * throw: the alerts stay pending and the outcome says why.
 */
export async function alertStep(o: AlertStepOptions): Promise<AlertOutcome> {
  const rules = o.pipeline.alerts?.rules;
  if (!o.pipeline.alerts || !rules) return { status: 'skipped', found: 0, created: 0, delivered: 0, pending: 0, deliveryError: null };
  const now = o.now();
  const store = new AlertStore(o.wh);
  const log = o.logger.child({ runId: o.runId, pipeline: o.pipeline.name, step: 'alerts' });

  const drafts: AlertDraft[] = [];
  const started = await runStart(o.wh, o.runId, now);
  const observations = await readRankObservations(o.wh, { pipeline: o.pipeline.name, runId: o.runId });
  drafts.push(
    ...evaluateRankRules(observations, rules, {
      pipeline: o.pipeline.name,
      runId: o.runId,
      intervalDays: scheduledIntervalDays(o.pipeline, started),
    }),
  );
  drafts.push(
    ...evaluateRunRules(
      {
        pipeline: o.pipeline.name,
        runId: o.runId,
        runDate: started.toISOString().slice(0, 10),
        state: o.runState,
        stopReason: o.stopReason,
        estimateCny: o.estimateCny,
        chargedNetCny: o.chargedNetCny ?? (await chargedNet(o.wh, o.runId)),
      },
      rules,
    ),
  );
  if (o.runState !== 'completed') {
    const missed = missedNights(
      o.pipeline,
      [...(await readRunStarts(o.wh, o.pipeline.name, o.runId)), { startedAt: started, state: o.runState }],
      now,
    );
    if (missed) drafts.push(missed);
  }
  const created = await store.record(drafts, now);
  log.info({ found: drafts.length, created: created.length }, 'alerts evaluated');
  await o.afterBuild?.(created.length);

  const d = await deliverPending({
    store,
    pipeline: o.pipeline.name,
    alerts: o.pipeline.alerts,
    env: o.env,
    dispatcher: o.dispatcher,
    timeoutMs: o.timeoutMs,
    now: o.now,
    logger: log,
  });
  return {
    status: 'done',
    found: drafts.length,
    created: created.length,
    delivered: d.delivered,
    pending: d.pending,
    deliveryError: d.error,
  };
}

async function runStart(wh: Warehouse, runId: string, fallback: Date): Promise<Date> {
  return (await runQueries.runStartedAt(wh, runId)) ?? fallback;
}

/** The run's charge headers summed: a refund (unused depth) is a negative charge, so this is net. */
async function chargedNet(wh: Warehouse, runId: string): Promise<number> {
  await wh.flushIndex();
  const [row] = await wh.all<{ net: number }>(`select coalesce(sum(charge_cny), 0)::double as net from ledger where run_id = $1`, [runId]);
  return row?.net ?? 0;
}
