import type { ModelBuildResult } from './build-models.js';
import type { ModelTestResult } from './test-models.js';

/** One line per model for `pipeline models run`. */
export function formatBuild(r: ModelBuildResult): string {
  const what = r.mode === 'incremental' ? 'incremental' : r.materialized;
  const rows = r.rows === undefined ? '' : `  ${r.rows.toLocaleString('en-US')} rows`;
  const msg = r.message ? `  ${r.message}` : '';
  const passes = r.passes ? `, ${r.passes} passes` : '';
  return `${r.status.padEnd(7)} ${r.name.padEnd(34)} ${what.padEnd(11)}${rows}  (${r.ms} ms${passes})${msg}`;
}

/** The test report: one line per test, and for a failure its offending rows. */
export function formatTests(results: readonly ModelTestResult[]): string {
  const lines: string[] = [];
  for (const t of results) {
    const label = t.status === 'warned' ? 'WARN' : t.status.toUpperCase();
    lines.push(
      `${label.padEnd(7)} ${t.model}: ${t.test}${t.failures > 0 ? `  (${t.failures} offending rows)` : ''}${t.message ? `  ${t.message}` : ''}`,
    );
    for (const row of t.sample) lines.push(`          ${JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? Number(v) : v))}`);
  }
  const failed = results.filter((t) => t.status === 'failed' || t.status === 'error').length;
  const warned = results.filter((t) => t.status === 'warned').length;
  lines.push(`${results.length} tests, ${failed} failed${warned > 0 ? `, ${warned} warned` : ''}`);
  return `${lines.join('\n')}\n`;
}
