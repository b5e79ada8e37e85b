import { listValue } from '@duckdb/node-api';
import type { Warehouse } from '../warehouse/index.js';
import { alertId, type AlertDraft, type StoredAlert } from './alert.js';

/**
 * The one writer of the `alerts` table and its delivery states: `pending` when made,
 * `delivered` after a 2xx. A failed attempt leaves the alert pending (counted in
 * `attempts`, with `last_error`), so the next run sends it again.
 */
export class AlertStore {
  constructor(private readonly wh: Warehouse) {}

  /**
   * Stores the drafts not stored before, in one transaction committed before any delivery,
   * so a crash after it loses nothing and a rerun makes nothing twice. Returns the ids of
   * the new rows.
   */
  async record(drafts: readonly AlertDraft[], at: Date): Promise<string[]> {
    if (drafts.length === 0) return [];
    const byId = new Map(drafts.map((d) => [alertId(d), d]));
    const existing = await this.wh.all<{ alert_id: string }>(
      `select alert_id from alerts where alert_id in (select unnest($1::VARCHAR[]))`,
      [listValue([...byId.keys()])],
    );
    for (const { alert_id } of existing) byId.delete(alert_id);
    await this.wh.transaction(async () => {
      for (const [id, d] of byId) {
        const s = d.series;
        await this.wh.run(
          `insert into alerts values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::DATE, $13, $14, $15, $16, $17, $18, $19::TIMESTAMPTZ, 'pending', 0, NULL, NULL, NULL)`,
          [
            id,
            d.pipeline,
            d.rule,
            d.subject,
            s?.keyword ?? null,
            s?.locationCode ?? null,
            s?.languageCode ?? null,
            s?.device ?? null,
            s?.engine ?? null,
            s?.domain ?? null,
            d.runId,
            d.checkDate,
            d.before,
            d.after,
            d.threshold,
            d.daysSincePrevious ?? null,
            d.acrossGap ?? null,
            d.message,
            at.toISOString(),
          ],
        );
      }
    });
    return [...byId.keys()];
  }

  /** A pipeline's alerts not yet acknowledged, oldest first. */
  pending(pipeline: string): Promise<StoredAlert[]> {
    return this.list({ pipeline, state: 'pending' });
  }

  /** Marks alerts delivered after the webhook answered 2xx. */
  async markDelivered(ids: readonly string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.wh.run(
      `update alerts set delivery_state = 'delivered', attempts = attempts + 1, last_attempt_at = $1::TIMESTAMPTZ, delivered_at = $1::TIMESTAMPTZ, last_error = NULL
       where alert_id in (select unnest($2::VARCHAR[])) and delivery_state = 'pending'`,
      [at.toISOString(), listValue([...ids])],
    );
  }

  /** Records a POST that was not acknowledged; the alerts stay pending for the next run. */
  async markAttemptFailed(ids: readonly string[], error: string, at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.wh.run(
      `update alerts set attempts = attempts + 1, last_attempt_at = $1::TIMESTAMPTZ, last_error = $2
       where alert_id in (select unnest($3::VARCHAR[])) and delivery_state = 'pending'`,
      [at.toISOString(), error, listValue([...ids])],
    );
  }

  /** Alerts, oldest first: of one pipeline, in one state, created or checked since a day. */
  async list(q: { pipeline?: string; state?: 'pending' | 'delivered'; since?: string } = {}): Promise<StoredAlert[]> {
    const rows = await this.wh.all<Record<string, unknown>>(
      `select *, strftime(check_date, '%Y-%m-%d') as check_day, created_at::varchar as created, last_attempt_at::varchar as last_attempt, delivered_at::varchar as delivered
       from alerts
       where ($1::VARCHAR is null or pipeline = $1::VARCHAR) and ($2::VARCHAR is null or delivery_state = $2::VARCHAR)
         and ($3::VARCHAR is null or check_date >= $3::DATE or created_at >= $3::DATE)
       order by created_at, check_date, rule, subject`,
      [q.pipeline ?? null, q.state ?? null, q.since ?? null],
    );
    return rows.map(toStored);
  }
}

function toStored(r: Record<string, unknown>): StoredAlert {
  const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: String(r.alert_id),
    rule: r.rule as StoredAlert['rule'],
    pipeline: String(r.pipeline),
    subject: String(r.subject),
    ...(r.keyword !== null
      ? {
          series: {
            keyword: String(r.keyword),
            locationCode: Number(r.location_code),
            languageCode: String(r.language_code),
            device: String(r.device),
            engine: String(r.engine),
            domain: String(r.domain),
          },
        }
      : {}),
    runId: str(r.run_id),
    checkDate: String(r.check_day),
    before: str(r.value_before),
    after: str(r.value_after),
    threshold: String(r.threshold),
    daysSincePrevious: r.days_since_previous === null ? null : Number(r.days_since_previous),
    acrossGap: r.across_gap === null ? null : Boolean(r.across_gap),
    message: String(r.message),
    createdAt: String(r.created),
    deliveryState: r.delivery_state as StoredAlert['deliveryState'],
    attempts: Number(r.attempts),
    lastAttemptAt: str(r.last_attempt),
    lastError: str(r.last_error),
    deliveredAt: str(r.delivered),
  };
}
