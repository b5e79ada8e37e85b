import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // dist/ built once when not current: CLI children run it (bin/pipeline.mjs), never a stale one.
    globalSetup: ['test/global-setup.ts'],
    allowOnly: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // DuckDB files and loopback servers: keep the two cores for the tests themselves.
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
  },
});
