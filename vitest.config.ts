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
    // Each file in a fresh process (vitest's default `isolate`). Tried without (`isolate: false`,
    // 2026-11-28): the imports fell from 82.8 s to 10.7 s of the suite, but the tests' own time
    // rose from 973 s to 1,075 s (likely: a worker's heap grows over its files, and each
    // in-process night's full collections between steps, collectGarbage, walk all of it): 549 s
    // in CI against 551, for files that no longer start clean. Not kept.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
  },
});
