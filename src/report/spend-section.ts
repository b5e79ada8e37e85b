import { listRelations } from '../models/index.js';
import type { SpendSection } from './payload.js';
import { round, type ReportContext } from './report-context.js';

/**
 * What was charged per day, pipeline and endpoint over the last `days` days with calls,
 * from `spend_daily`. Only endpoints that charged something are kept (free calls such
 * as task_get would be empty bars); amounts in CNY, to the 1/10,000.
 */
export async function spendSection(ctx: ReportContext): Promise<SpendSection | null> {
  const rel = await listRelations(ctx.wh);
  if (!rel.has('spend_daily')) {
    ctx.notes.push('No spend_daily model: run `pipeline models run`.');
    return null;
  }
  const rows = await ctx.wh.all<{ d: string; pipeline: string; endpoint_id: string; charge: number; calls: number }>(`
    with scoped as (
      select * from spend_daily where ${ctx.inScope('pipeline')}
    ),
    window_days as (
      select distinct call_date from scoped order by call_date desc limit ${Math.max(1, Math.floor(ctx.scope.days))}
    )
    select strftime(call_date, '%Y-%m-%d') as d, pipeline, endpoint_id,
           sum(charge_cny)::double as charge, sum(calls)::int as calls,
    from scoped
    where call_date >= (select min(call_date) from window_days)
    group by all
    having sum(charge_cny) <> 0
    order by d, pipeline, endpoint_id`);
  if (rows.length === 0) {
    ctx.notes.push('spend_daily has no charged calls for the pipelines in scope.');
    return null;
  }
  const days = [...new Set(rows.map((r) => r.d))].sort();
  const endpoints = [...new Set(rows.map((r) => r.endpoint_id))].sort();
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  const endpointIndex = new Map(endpoints.map((e, i) => [e, i]));
  return {
    days,
    endpoints,
    rows: rows.map((r) => [dayIndex.get(r.d)!, ctx.pipeline(r.pipeline), endpointIndex.get(r.endpoint_id)!, round(r.charge, 4), r.calls]),
  };
}
