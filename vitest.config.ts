import { defineConfig } from 'vitest/config';
import LongestFirst from './test/sequencer.js';

/**
 * The suite on the 2-core machine (vitest's own time, 2026-11-28; docs/performance.md, "The test
 * suite"): a third of a test file's time is spent waiting (on the emulator's scaled minutes, on
 * the spec's whole-second id_list windows, on timeouts and back-offs a test provokes on purpose),
 * so four files run at once and fill those waits. DuckDB takes one worker thread in each (its
 * default is one a core, and four files share two). The unit files share their processes
 * (isolate: false; a file's own process cost more than most unit files' tests); the integration
 * and conformance files each start in a fresh one: their nights' heaps and DuckDB instances
 * would pile up in a shared one (tried for the whole suite: 549 s against 551).
 */
export default defineConfig({
  test: {
    // dist/ built once when not current: CLI children run it (bin/pipeline.mjs), never a stale one.
    globalSetup: ['test/global-setup.ts'],
    allowOnly: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 4,
    env: { PIPELINE_DUCKDB_THREADS: '1' },
    sequence: { sequencer: LongestFirst },
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts', 'test/conformance/**/*.test.ts'] } },
    ],
  },
});
