import type { AlertsSection } from './payload.js';
import type { ReportContext } from './report-context.js';

/** Alerts listed at most; the page says how many there were. */
const SHOWN = 50;

/**
 * The most recent alerts of the pipelines in scope over the report's window (by check
 * date), newest first, with their delivery state; null when there are none. Messages lose
 * their Slack emphasis marks (the page shows plain text).
 */
export async function alertsSection(ctx: ReportContext): Promise<AlertsSection | null> {
  const scoped = ctx.inScope('pipeline');
  // The window ends at the newest alert, as the other sections' windows end at the newest data.
  const where = `${scoped} and check_date >= (select max(check_date) from alerts where ${scoped}) - ${Math.max(1, Math.floor(ctx.scope.days))}`;
  const rows = await ctx.wh.all<{
    d: string;
    pipeline: string;
    rule: string;
    message: string;
    delivered: boolean;
    attempts: number;
    last_error: string | null;
  }>(
    `select strftime(check_date, '%Y-%m-%d') as d, pipeline, rule, message, delivery_state = 'delivered' as delivered, attempts, last_error
     from alerts where ${where}
     order by check_date desc, created_at desc, rule, subject
     limit ${SHOWN}`,
  );
  if (rows.length === 0) return null;
  const [count] = await ctx.wh.all<{ n: number }>(`select count(*)::int as n from alerts where ${where}`);
  return {
    total: count?.n ?? rows.length,
    rows: rows.map((r) => [r.d, ctx.pipeline(r.pipeline), r.rule, plain(r.message), r.delivered ? 1 : 0, Number(r.attempts), r.last_error]),
  };
}

function plain(message: string): string {
  return message.replace(/\*([^*\n]+)\*/g, '$1').replace(/(^|\s)_([^_\n]+)_(?=\s|$)/g, '$1$2');
}
