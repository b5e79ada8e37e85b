import { describe, expect, it } from 'vitest';
import { formatSummary } from '../../../src/cli/format-summary.js';
import type { RunSummary } from '../../../src/run/index.js';

const summary = (rowsLoaded: RunSummary['rowsLoaded']): RunSummary => ({
  runId: 'r1',
  pipeline: 'keywords',
  state: 'completed',
  stopReason: null,
  stopKind: null,
  tasks: { planned: 40, posted: 40, failed: 0, collected: 40, pending: 0 },
  rowsLoaded,
  calls: 47,
  chargedCny: '0',
  refundedCny: '0',
  durationMs: 4000,
  warehouse: process.cwd(),
});

describe('formatSummary', () => {
  it("gives the SERP tables' rows and the other tables' rest, so the parts add up to the total", () => {
    const line = formatSummary(summary({ total: 4434, serp_results: 38, serp_items: 3902 })).split('\n')[2];
    expect(line).toBe('  rows       4,434 loaded (serp_results 38, serp_items 3,902, other tables 494)');
  });

  it('gives no parts for a run without SERP rows, and no rest when the SERP tables are all', () => {
    expect(formatSummary(summary({ total: 456, serp_results: 0, serp_items: 0 })).split('\n')[2]).toBe('  rows       456 loaded');
    expect(formatSummary(summary({ total: 140, serp_results: 40, serp_items: 100 })).split('\n')[2]).toBe(
      '  rows       140 loaded (serp_results 40, serp_items 100)',
    );
  });

  it('says when the run finished an earlier unfinished one, and says nothing of it otherwise', () => {
    const rows = { total: 140, serp_results: 40, serp_items: 100 };
    expect(
      formatSummary({ ...summary(rows), resumed: true })
        .split('\n')
        .at(-2),
    ).toBe('  resumed    an earlier unfinished run, finished under its id: what it had bought was not bought again');
    expect(formatSummary({ ...summary(rows), resumed: false })).not.toContain('resumed');
  });
});
