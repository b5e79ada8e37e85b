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
    `  rows       ${n(s.rowsLoaded.total)} loaded${s.rowsLoaded.serp_items ? ` (serp_results ${n(s.rowsLoaded.serp_results)}, serp_items ${n(s.rowsLoaded.serp_items)})` : ''}`,
    `  charged    ${s.chargedCny} CNY net over ${n(s.calls)} calls (ledger)${Number(s.refundedCny) > 0 ? `, after ${s.refundedCny} CNY refunded for unused depth` : ''}`,
    `  warehouse  ${wh}/warehouse.duckdb, Parquet under ${wh}/parquet/`,
  ];
  if (s.stopReason) lines.push(`  stopped    ${s.stopReason}`);
  return `${lines.join('\n')}\n`;
}
