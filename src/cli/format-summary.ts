import { relative } from 'node:path';
import type { RunSummary } from '../run/index.js';

const n = (x: number) => x.toLocaleString('en-US');

/** The human summary printed at the end of `pipeline run`. */
export function formatSummary(s: RunSummary): string {
  const rel = relative(process.cwd(), s.warehouse);
  const wh = rel === '' ? '.' : rel.startsWith('..') ? s.warehouse : rel;
  const lines = [
    `run ${s.runId}  pipeline ${s.pipeline}  ${s.state}  (${(s.durationMs / 1000).toFixed(1)} s)`,
    `  tasks      planned ${n(s.tasks.planned)}  posted ${n(s.tasks.posted)}  collected ${n(s.tasks.collected)}  failed ${n(s.tasks.failed)}  waiting ${n(s.tasks.pending)}`,
    `  rows       ${n(s.rowsLoaded.total)} loaded${serpRows(s.rowsLoaded)}`,
    `  charged    ${s.chargedCny} CNY net over ${n(s.calls)} calls (ledger)${Number(s.refundedCny) > 0 ? `, after ${s.refundedCny} CNY refunded for unused depth` : ''}`,
    `  warehouse  ${wh}/warehouse.duckdb, Parquet under ${wh}/parquet/`,
  ];
  if (s.stopReason) lines.push(`  stopped    ${s.stopReason}`);
  if (s.completedWhileWaiting)
    lines.push(
      `  not run    this pipeline's run ${s.completedWhileWaiting} completed while this one waited for the warehouse; its figures are above, and nothing was bought again`,
    );
  if (s.resumed) lines.push(`  resumed    an earlier unfinished run, finished under its id: what it had bought was not bought again`);
  return `${lines.join('\n')}\n`;
}

/** The SERP tables' part of the rows, and the other tables' rest (search volumes, labs, ...). */
function serpRows(r: RunSummary['rowsLoaded']): string {
  if (!r.serp_items && !r.serp_results) return '';
  const rest = r.total - r.serp_results - r.serp_items;
  return ` (serp_results ${n(r.serp_results)}, serp_items ${n(r.serp_items)}${rest > 0 ? `, other tables ${n(rest)}` : ''})`;
}
